// SPDX-License-Identifier: Apache-2.0
// The P/Invoke declarations of the C ABI (capi/scenecrdt.h, docs/C-ABI.md) and the native
// struct layouts with a struct_size field. size_t is UIntPtr (C# 7 compatible), handles are
// IntPtr. Arrays of blittable types are pinned and passed as pointers, so the library writes
// into them directly; no [Out]: with it mono copies the array back (a 10 000-matrix copy went
// from 150 to 345 us, docs/BINDINGS.md "Overhead").
using System;
using System.Runtime.InteropServices;

namespace SceneCrdt
{
    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeNodeInfo
    {
        public uint StructSize;
        public uint EffectiveParent;
        public uint DeclaredParent;
        public int Parked;
        public int Placeholder;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeApplyStats
    {
        public uint StructSize;
        public uint Reserved;
        public ulong Calls, Messages, Changed, Ignored, Refused, DecodeErrors;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeInterpolationOptions
    {
        public uint StructSize;
        public float SnapDistance;
        public long FixedDelayUs, InitialDelayUs, MinDelayUs, MaxDelayUs;
        public double IntervalMultiple, JitterMultiple, CatchUp, SlowDown;
        public long MaxExtrapolationUs, MaxIntervalUs;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeInterpolationStats
    {
        public uint StructSize;
        public uint BufferDepth, TrackedEntities, ActiveEntities;
        public long PlaybackTimeUs, DelayUs, TargetDelayUs, IntervalUs, JitterUs;
        public ulong Frames, StalledFrames, ExtrapolatedFrames, Snaps, EntitiesAdded,
            EntitiesRemoved, LateBatches, Resets, DroppedSamples, TimeRegressions;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeClientStats
    {
        public uint StructSize;
        public uint CurrentServer;
        public ulong Connects, Reconnects, Failovers, Resumes, Resyncs, PendingFrames,
            UnsentWrites, LiveFrames, BytesReceived, BytesSent;
    }

    internal static class NativeMethods
    {
        // libscenecrdt.so.1 / scenecrdt.dll / libscenecrdt.dylib (Plugins/README.md).
        private const string Lib = "scenecrdt";

        internal const uint AbiVersion = 1;
        internal const int StateHashChars = 65;  // SC_STATE_HASH_CHARS
        internal const int WriteMaxBytes = 68;   // SC_WRITE_MAX_BYTES
        internal const long NoSenderTime = long.MinValue;  // SC_NO_SENDER_TIME

        [DllImport(Lib)] internal static extern uint sc_abi_version();
        [DllImport(Lib)] internal static extern IntPtr sc_last_error();
        [DllImport(Lib)] internal static extern IntPtr sc_error_name(int status);
        [DllImport(Lib)] internal static extern long sc_now_us();

        [DllImport(Lib)] internal static extern IntPtr sc_runtime_create();
        [DllImport(Lib)] internal static extern void sc_runtime_destroy(IntPtr rt);
        [DllImport(Lib)]
        internal static extern int sc_runtime_apply(IntPtr rt, byte[] dcl, UIntPtr len);
        [DllImport(Lib)]
        internal static extern int sc_runtime_apply_at(IntPtr rt, byte[] dcl, UIntPtr len,
                                                       long receiveUs, long senderUs);
        [DllImport(Lib)]
        internal static extern int sc_runtime_apply_stats(IntPtr rt, ref NativeApplyStats o);
        [DllImport(Lib)] internal static extern int sc_runtime_update(IntPtr rt);
        [DllImport(Lib)] internal static extern UIntPtr sc_runtime_entity_count(IntPtr rt);
        [DllImport(Lib)]
        internal static extern int sc_runtime_world_matrix(IntPtr rt, uint e,
                                                           float[] m16);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_world(IntPtr rt, uint[] ids,
                                                         float[] m, UIntPtr cap,
                                                         out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_changed(IntPtr rt, uint[] ids,
                                                           UIntPtr cap, out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_changed_world(IntPtr rt, uint[] ids,
                                                                 float[] m, UIntPtr cap,
                                                                 out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_added(IntPtr rt, uint[] ids,
                                                         UIntPtr cap, out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_removed(IntPtr rt, uint[] ids,
                                                           UIntPtr cap, out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_get_transform(IntPtr rt, uint e, out Transform t);
        [DllImport(Lib)]
        internal static extern int sc_runtime_node_info(IntPtr rt, uint e,
                                                        ref NativeNodeInfo info);
        [DllImport(Lib)]
        internal static extern int sc_runtime_state_hash(IntPtr rt, byte[] hex, UIntPtr cap);
        [DllImport(Lib)]
        internal static extern int sc_runtime_write_transform(IntPtr rt, uint e, ref Transform t,
                                                              byte[] msg, UIntPtr cap,
                                                              out UIntPtr len);
        [DllImport(Lib)]
        internal static extern int sc_runtime_delete_transform(IntPtr rt, uint e,
                                                               byte[] msg, UIntPtr cap,
                                                               out UIntPtr len);
        [DllImport(Lib)]
        internal static extern int sc_runtime_delete_entity(IntPtr rt, uint e, byte[] msg,
                                                            UIntPtr cap, out UIntPtr len);

        // Components (docs/COMPONENTS.md).
        internal const int AppendRecordHeaderBytes = 8;  // SC_APPEND_RECORD_HEADER_BYTES
        [DllImport(Lib)]
        internal static extern int sc_runtime_get_component(IntPtr rt, uint e, uint id, byte[] buf,
                                                            UIntPtr cap, out UIntPtr len);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_append_values(IntPtr rt, uint e, uint id,
                                                                 byte[] buf, UIntPtr cap,
                                                                 out UIntPtr len);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_changed_components(IntPtr rt, uint[] ids,
                                                                      uint[] components,
                                                                      UIntPtr cap,
                                                                      out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_added_components(IntPtr rt, uint[] ids,
                                                                    uint[] components,
                                                                    UIntPtr cap,
                                                                    out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_removed_components(IntPtr rt, uint[] ids,
                                                                      uint[] components,
                                                                      UIntPtr cap,
                                                                      out UIntPtr count);

        [DllImport(Lib)]
        internal static extern int sc_interpolation_options_default(
            ref NativeInterpolationOptions o);
        [DllImport(Lib)]
        internal static extern int sc_runtime_enable_interpolation(
            IntPtr rt, ref NativeInterpolationOptions o);
        [DllImport(Lib, EntryPoint = "sc_runtime_enable_interpolation")]
        internal static extern int sc_runtime_enable_interpolation_defaults(IntPtr rt,
                                                                            IntPtr nullOptions);
        [DllImport(Lib)] internal static extern int sc_runtime_disable_interpolation(IntPtr rt);
        [DllImport(Lib)] internal static extern int sc_runtime_interpolation_enabled(IntPtr rt);
        [DllImport(Lib)]
        internal static extern int sc_runtime_update_interpolated(IntPtr rt, long renderUs);
        [DllImport(Lib)]
        internal static extern UIntPtr sc_runtime_interpolated_entity_count(IntPtr rt);
        [DllImport(Lib)]
        internal static extern int sc_runtime_interpolated_world_matrix(IntPtr rt, uint e,
                                                                        float[] m16);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_interpolated_world(IntPtr rt,
                                                                      uint[] ids,
                                                                      float[] m,
                                                                      UIntPtr cap,
                                                                      out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_interpolated_changed(IntPtr rt,
                                                                        uint[] ids,
                                                                        UIntPtr cap,
                                                                        out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_interpolated_changed_world(
            IntPtr rt, uint[] ids, float[] m, UIntPtr cap, out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_interpolated_added(IntPtr rt,
                                                                      uint[] ids,
                                                                      UIntPtr cap,
                                                                      out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_copy_interpolated_removed(IntPtr rt,
                                                                        uint[] ids,
                                                                        UIntPtr cap,
                                                                        out UIntPtr count);
        [DllImport(Lib)]
        internal static extern int sc_runtime_interpolation_stats(
            IntPtr rt, ref NativeInterpolationStats o);

        [DllImport(Lib)]  // NUL-terminated UTF-8 strings (Client.Utf8z)
        internal static extern IntPtr sc_client_connect(byte[] url, byte[] scene, byte[] token);
        [DllImport(Lib)] internal static extern void sc_client_destroy(IntPtr c);
        [DllImport(Lib)] internal static extern int sc_client_poll(IntPtr c, uint timeoutMs);
        [DllImport(Lib)] internal static extern int sc_client_state_ready(IntPtr c);
        [DllImport(Lib)] internal static extern int sc_client_connected(IntPtr c);
        [DllImport(Lib)] internal static extern IntPtr sc_client_runtime(IntPtr c);
        [DllImport(Lib)]
        internal static extern int sc_client_write_transform(IntPtr c, uint e, ref Transform t);
        [DllImport(Lib)] internal static extern int sc_client_delete_transform(IntPtr c, uint e);
        [DllImport(Lib)] internal static extern int sc_client_delete_entity(IntPtr c, uint e);
        [DllImport(Lib)] internal static extern int sc_client_flush(IntPtr c);
        [DllImport(Lib)]
        internal static extern int sc_client_enable_interpolation(
            IntPtr c, ref NativeInterpolationOptions o);
        [DllImport(Lib, EntryPoint = "sc_client_enable_interpolation")]
        internal static extern int sc_client_enable_interpolation_defaults(IntPtr c,
                                                                           IntPtr nullOptions);
        [DllImport(Lib)] internal static extern int sc_client_disable_interpolation(IntPtr c);
        [DllImport(Lib)]
        internal static extern int sc_client_update_interpolated(IntPtr c, long renderUs);
        [DllImport(Lib)]
        internal static extern int sc_client_get_stats(IntPtr c, ref NativeClientStats o);
    }
}
