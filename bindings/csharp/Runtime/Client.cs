// SPDX-License-Identifier: Apache-2.0
// Client: a networked replica of one scene over the C ABI's sc_client (docs/C-ABI.md
// "Client", docs/CLIENT.md): joins a `scenecrdt serve`, applies what arrives at each Poll,
// sends Lamport-stamped writes (resent until acknowledged), reconnects and fails over by
// itself. The network runs on a thread of the library's own; every call here belongs to the
// thread that owns the Client.
using System;
using System.Runtime.InteropServices;

namespace SceneCrdt
{
    public sealed class Client : IDisposable
    {
        private IntPtr handle;
        private readonly Runtime view;

        /// <summary>
        /// Starts joining `scene` on `url` (tcp://HOST:PORT, ws://HOST:PORT,
        /// ws://HOST:PORT/scene/NAME with scene null, or a comma-separated list of nodes of one
        /// cluster); returns at once, Poll drives the join. A malformed URL throws
        /// SceneCrdtException (Status.InvalidArgument); a server that is not up is retried.
        /// </summary>
        public Client(string url, string scene, string token = null)
        {
            Errors.CheckAbi();
            if (url == null) throw Errors.Misuse("SceneCrdt.Client: url is null");
            handle = NativeMethods.sc_client_connect(Errors.Utf8z(url), Errors.Utf8z(scene),
                                                     Errors.Utf8z(token));
            if (handle == IntPtr.Zero) throw Errors.FromStatus((int)Status.InvalidArgument);
            IntPtr rt = NativeMethods.sc_client_runtime(handle);
            if (rt == IntPtr.Zero)
            {
                SceneCrdtException e = Errors.FromStatus((int)Status.Internal);
                NativeMethods.sc_client_destroy(handle);
                handle = IntPtr.Zero;
                throw e;
            }
            view = new Runtime(this, rt);
        }

        ~Client()
        {
            if (handle != IntPtr.Zero) NativeMethods.sc_client_destroy(handle);
        }

        /// <summary>Stops the network thread and frees the client (unacknowledged writes are lost).</summary>
        public void Dispose()
        {
            if (handle != IntPtr.Zero) NativeMethods.sc_client_destroy(handle);
            handle = IntPtr.Zero;
            GC.SuppressFinalize(this);
        }

        internal bool IsDisposed { get { return handle == IntPtr.Zero; } }

        private IntPtr H
        {
            get
            {
                if (handle == IntPtr.Zero) throw Errors.Misuse("SceneCrdt.Client: used after Dispose");
                return handle;
            }
        }

        /// <summary>
        /// Once per frame: waits up to timeoutMs for input, applies it, reconnects when due,
        /// sends writes, updates the world matrices (with interpolation on, UpdateInterpolated
        /// updates instead). Returns the frames handled; throws with Status.Closed once the
        /// server refused the client for good.
        /// </summary>
        public int Poll(int timeoutMs)
        {
            IntPtr h = H;
            if (timeoutMs < 0) throw Errors.Misuse("SceneCrdt.Client.Poll: negative timeout");
            int frames = NativeMethods.sc_client_poll(h, (uint)timeoutMs);
            Errors.Check(frames);
            return frames;
        }

        /// <summary>True once the scene's state has been applied (stays true across reconnects).</summary>
        public bool StateReady { get { return Flag(NativeMethods.sc_client_state_ready(H)); } }

        /// <summary>True while connected with the current connection's state applied.</summary>
        public bool Connected { get { return Flag(NativeMethods.sc_client_connected(H)); } }

        /// <summary>The replica, read-only (changes throw Status.ReadOnly); dies with the Client.</summary>
        public Runtime Runtime
        {
            get
            {
                if (IsDisposed) throw Errors.Misuse("SceneCrdt.Client: used after Dispose");
                return view;
            }
        }

        /// <summary>Local writes: merged at once, sent at the next Poll or Flush, resent until acknowledged.</summary>
        public void WriteTransform(uint entity, Transform transform)
        {
            Errors.Check(NativeMethods.sc_client_write_transform(H, entity, ref transform));
        }

        public void DeleteTransform(uint entity)
        {
            Errors.Check(NativeMethods.sc_client_delete_transform(H, entity));
        }

        public void DeleteEntity(uint entity)
        {
            Errors.Check(NativeMethods.sc_client_delete_entity(H, entity));
        }

        /// <summary>Sends buffered writes now (when connected); Poll does it too.</summary>
        public void Flush() { Errors.Check(NativeMethods.sc_client_flush(H)); }

        /// <summary>Interpolated presentation of the replica (null: the defaults).</summary>
        public void EnableInterpolation(InterpolationOptions options = null)
        {
            IntPtr h = H;
            if (options == null)
            {
                Errors.Check(NativeMethods.sc_client_enable_interpolation_defaults(h, IntPtr.Zero));
                return;
            }
            var n = options.ToNative();
            Errors.Check(NativeMethods.sc_client_enable_interpolation(h, ref n));
        }

        public void DisableInterpolation()
        {
            Errors.Check(NativeMethods.sc_client_disable_interpolation(H));
        }

        /// <summary>After Poll, with interpolation: the presentation at renderTimeUs (Runtime.NowUs's clock).</summary>
        public void UpdateInterpolated(long renderTimeUs)
        {
            Errors.Check(NativeMethods.sc_client_update_interpolated(H, renderTimeUs));
        }

        /// <summary>The interpolated world matrix (the replica's without interpolation).</summary>
        public bool TryGetInterpolatedWorldMatrix(uint entity, float[] m16)
        {
            return Runtime.TryGetInterpolatedWorldMatrix(entity, m16);
        }

        public ClientStats Stats
        {
            get
            {
                var n = new NativeClientStats();
                n.StructSize = (uint)Marshal.SizeOf(typeof(NativeClientStats));
                Errors.Check(NativeMethods.sc_client_get_stats(H, ref n));
                return new ClientStats {
                    CurrentServer = n.CurrentServer, Connects = n.Connects,
                    Reconnects = n.Reconnects, Failovers = n.Failovers, Resumes = n.Resumes,
                    Resyncs = n.Resyncs, PendingFrames = n.PendingFrames,
                    UnsentWrites = n.UnsentWrites, LiveFrames = n.LiveFrames,
                    BytesReceived = n.BytesReceived, BytesSent = n.BytesSent,
                };
            }
        }

        private static bool Flag(int value)
        {
            Errors.Check(value);
            return value == 1;
        }
    }
}
