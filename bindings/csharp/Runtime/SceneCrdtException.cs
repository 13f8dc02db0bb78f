// SPDX-License-Identifier: Apache-2.0
// SceneCrdtException, the one exception of the SceneCrdt namespace, and Errors, which turns a
// negative C ABI status into it with the calling thread's sc_last_error() text (read at once,
// on the thread of the failing call, as docs/C-ABI.md requires).
using System;
using System.Runtime.InteropServices;
using System.Text;

namespace SceneCrdt
{
    /// <summary>
    /// A failure of the scenecrdt library or a misuse of this binding (a disposed handle, a
    /// too-short array, a bad URL). Status is the C ABI status, StatusName its name
    /// ("SC_E_NOT_FOUND"), NativeMessage the library's text ("function: reason").
    /// </summary>
    public class SceneCrdtException : Exception
    {
        public Status Status { get; private set; }
        public string StatusName { get; private set; }
        public string NativeMessage { get; private set; }

        public SceneCrdtException(Status status, string statusName, string nativeMessage)
            : base(statusName + ": " + nativeMessage)
        {
            Status = status;
            StatusName = statusName;
            NativeMessage = nativeMessage;
        }
    }

    internal static class Errors
    {
        private static bool abiChecked;

        // Throws unless the loaded library speaks this binding's ABI major (docs/C-ABI.md
        // "ABI stability"). Called by every constructor.
        internal static void CheckAbi()
        {
            if (abiChecked) return;
            uint version = NativeMethods.sc_abi_version();
            if (version != NativeMethods.AbiVersion)
            {
                throw new SceneCrdtException(
                    Status.Unsupported, "SC_E_UNSUPPORTED",
                    "libscenecrdt has ABI version " + version + ", this binding needs " +
                        NativeMethods.AbiVersion);
            }
            abiChecked = true;
        }

        internal static string Utf8(IntPtr text)
        {
            if (text == IntPtr.Zero) return "";
            int n = 0;
            while (Marshal.ReadByte(text, n) != 0) ++n;
            var bytes = new byte[n];
            Marshal.Copy(text, bytes, 0, n);
            return Encoding.UTF8.GetString(bytes);
        }

        internal static string StatusName(int status)
        {
            return Utf8(NativeMethods.sc_error_name(status));
        }

        internal static SceneCrdtException FromStatus(int status)
        {
            return new SceneCrdtException((Status)status, StatusName(status),
                                          Utf8(NativeMethods.sc_last_error()));
        }

        // A misuse the binding detects itself (the library is never called).
        internal static SceneCrdtException Misuse(string what)
        {
            return new SceneCrdtException(Status.InvalidArgument, "SC_E_INVALID_ARGUMENT", what);
        }

        internal static void Check(int status)
        {
            if (status < 0) throw FromStatus(status);
        }

        internal static byte[] Utf8z(string s)
        {
            if (s == null) return null;
            var bytes = new byte[Encoding.UTF8.GetByteCount(s) + 1];
            Encoding.UTF8.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }
    }
}
