// SPDX-License-Identifier: Apache-2.0
// Runtime: a replica of one scene over the C ABI's sc_runtime (docs/C-ABI.md). DCL CRDT bytes
// in, column-major world matrices out; local writes return the DCL bytes to send. A Runtime is
// either owned (new Runtime(): freed by Dispose or the finalizer) or the read-only view of a
// Client (Client.Runtime: changes throw SceneCrdtException with Status.ReadOnly; it dies with
// its Client). One thread at a time per Runtime, as the C ABI requires. The component reads
// are in RuntimeComponents.cs.
using System;
using System.Runtime.InteropServices;
using System.Text;

namespace SceneCrdt
{
    public sealed partial class Runtime : IDisposable
    {
        private IntPtr handle;
        private readonly bool owned;
        private readonly Client owner;  // the Client of a view, null for an owned Runtime
        private readonly byte[] message = new byte[NativeMethods.WriteMaxBytes];

        /// <summary>A new, empty replica (interpolation off).</summary>
        public Runtime()
        {
            Errors.CheckAbi();
            handle = NativeMethods.sc_runtime_create();
            if (handle == IntPtr.Zero) throw Errors.FromStatus((int)Status.NoMemory);
            owned = true;
        }

        internal Runtime(Client owner, IntPtr view)
        {
            handle = view;
            this.owner = owner;
            owned = false;
        }

        ~Runtime()
        {
            if (owned && handle != IntPtr.Zero) NativeMethods.sc_runtime_destroy(handle);
        }

        /// <summary>Frees an owned replica; a Client's view is left to its Client.</summary>
        public void Dispose()
        {
            if (!owned) return;  // a view lives as long as its Client
            if (handle != IntPtr.Zero) NativeMethods.sc_runtime_destroy(handle);
            handle = IntPtr.Zero;
            GC.SuppressFinalize(this);
        }

        /// <summary>True for the read-only view of a Client.</summary>
        public bool IsView { get { return !owned; } }

        private IntPtr H
        {
            get
            {
                if (handle == IntPtr.Zero || (owner != null && owner.IsDisposed))
                {
                    throw Errors.Misuse("SceneCrdt.Runtime: used after Dispose" +
                                        (owner != null ? " of its Client" : ""));
                }
                return handle;
            }
        }

        /// <summary>The library's ABI major version (1).</summary>
        public static uint AbiVersion { get { return NativeMethods.sc_abi_version(); } }

        /// <summary>The library's monotonic clock in microseconds (receive and render times).</summary>
        public static long NowUs() { return NativeMethods.sc_now_us(); }

        /// <summary>SC_NO_SENDER_TIME: a batch without a sender clock.</summary>
        public const long NoSenderTime = NativeMethods.NoSenderTime;

        // ---- Input -------------------------------------------------------------------------

        /// <summary>
        /// Decodes a DCL CRDT stream and merges it as `scenecrdt replay` does; the whole stream
        /// is decoded first, so a malformed one (Status.Decode, offset in the message) applies
        /// nothing. Changes reach the world matrices at the next Update.
        /// </summary>
        public void Apply(byte[] dcl)
        {
            IntPtr h = H;
            Errors.Check(NativeMethods.sc_runtime_apply(h, dcl, Length(dcl)));
        }

        /// <summary>Apply for one batch of live traffic received at receiveUs (interpolation).</summary>
        public void ApplyAt(byte[] dcl, long receiveUs, long senderUs = NoSenderTime)
        {
            IntPtr h = H;
            Errors.Check(NativeMethods.sc_runtime_apply_at(h, dcl, Length(dcl), receiveUs,
                                                           senderUs));
        }

        public ApplyStats ApplyStats
        {
            get
            {
                var n = new NativeApplyStats();
                n.StructSize = (uint)Marshal.SizeOf(typeof(NativeApplyStats));
                Errors.Check(NativeMethods.sc_runtime_apply_stats(H, ref n));
                return new ApplyStats { Calls = n.Calls, Messages = n.Messages,
                                        Changed = n.Changed, Ignored = n.Ignored,
                                        Refused = n.Refused, DecodeErrors = n.DecodeErrors };
            }
        }

        /// <summary>Once per frame: merged changes -> effective tree -> dirty world matrices.</summary>
        public void Update() { Errors.Check(NativeMethods.sc_runtime_update(H)); }

        // ---- Reads ---------------------------------------------------------------------------

        /// <summary>Entities with a Transform plus placeholders (not the root).</summary>
        public int EntityCount { get { return (int)NativeMethods.sc_runtime_entity_count(H); } }

        /// <summary>
        /// The world matrix of entity into m16[0..15], column-major (m16[12..14] is the
        /// translation), bit-identical to `scenecrdt replay --world`. False when the entity is
        /// not in the scene.
        /// </summary>
        public bool TryGetWorldMatrix(uint entity, float[] m16)
        {
            IntPtr h = H;
            CheckMatrix(m16);
            return Found(NativeMethods.sc_runtime_world_matrix(h, entity, m16));
        }

        /// <summary>The merged Transform (current at once); false when the entity has none.</summary>
        public bool TryGetTransform(uint entity, out Transform transform)
        {
            return Found(NativeMethods.sc_runtime_get_transform(H, entity, out transform));
        }

        /// <summary>The entity's place in the effective tree; false when not in the scene.</summary>
        public bool TryGetNodeInfo(uint entity, out NodeInfo info)
        {
            var n = new NativeNodeInfo();
            n.StructSize = (uint)Marshal.SizeOf(typeof(NativeNodeInfo));
            bool found = Found(NativeMethods.sc_runtime_node_info(H, entity, ref n));
            info = new NodeInfo { EffectiveParent = n.EffectiveParent,
                                  DeclaredParent = n.DeclaredParent, Parked = n.Parked != 0,
                                  Placeholder = n.Placeholder != 0 };
            return found;
        }

        /// <summary>The SHA-256 of the canonical CRDT state: replay's "stateHash".</summary>
        public string StateHash()
        {
            var hex = new byte[NativeMethods.StateHashChars];
            Errors.Check(NativeMethods.sc_runtime_state_hash(H, hex, (UIntPtr)hex.Length));
            return Encoding.ASCII.GetString(hex, 0, NativeMethods.StateHashChars - 1);
        }

        // Bulk copies (docs/C-ABI.md "Bulk copies"): one crossing per list and frame, into the
        // caller's arrays. TryCopy* returns false with count = the number needed when the arrays
        // are too small (nothing written); Copy*(ref ...) grows the arrays then (allocating only
        // when the list outgrows them) and returns the count. Matrices: 16 floats per entity.
        public bool TryCopyWorld(uint[] entities, float[] matrices, out int count)
        { return TryCopy(List.World, entities, matrices, out count); }
        public int CopyWorld(ref uint[] entities, ref float[] matrices)
        { return CopyGrowing(List.World, ref entities, ref matrices); }
        public bool TryCopyChanged(uint[] entities, out int count)
        { return TryCopy(List.Changed, entities, null, out count); }
        public int CopyChanged(ref uint[] entities)
        { float[] none = null; return CopyGrowing(List.Changed, ref entities, ref none); }
        public bool TryCopyChangedWorld(uint[] entities, float[] matrices, out int count)
        { return TryCopy(List.ChangedWorld, entities, matrices, out count); }
        public int CopyChangedWorld(ref uint[] entities, ref float[] matrices)
        { return CopyGrowing(List.ChangedWorld, ref entities, ref matrices); }
        public bool TryCopyAdded(uint[] entities, out int count)
        { return TryCopy(List.Added, entities, null, out count); }
        public int CopyAdded(ref uint[] entities)
        { float[] none = null; return CopyGrowing(List.Added, ref entities, ref none); }
        public bool TryCopyRemoved(uint[] entities, out int count)
        { return TryCopy(List.Removed, entities, null, out count); }
        public int CopyRemoved(ref uint[] entities)
        { float[] none = null; return CopyGrowing(List.Removed, ref entities, ref none); }

        /// <summary>Entities whose world matrix the last update recomputed (allocates).</summary>
        public uint[] Changed() { return Listed(List.Changed); }
        /// <summary>Entities that gained their Transform in the last update (allocates).</summary>
        public uint[] Added() { return Listed(List.Added); }
        /// <summary>Entities that lost their Transform in the last update (allocates).</summary>
        public uint[] Removed() { return Listed(List.Removed); }

        // ---- Local writes: merged here (Lamport rule), the DCL message to send returned -----

        /// <summary>Writes a Transform; returns the DCL bytes to send (empty: nothing changed).</summary>
        public byte[] WriteTransform(uint entity, Transform transform)
        {
            UIntPtr len;
            Errors.Check(NativeMethods.sc_runtime_write_transform(
                H, entity, ref transform, message, (UIntPtr)message.Length, out len));
            return Message(len);
        }

        /// <summary>DELETE_COMPONENT of the Transform; the DCL bytes to send.</summary>
        public byte[] DeleteTransform(uint entity)
        {
            UIntPtr len;
            Errors.Check(NativeMethods.sc_runtime_delete_transform(
                H, entity, message, (UIntPtr)message.Length, out len));
            return Message(len);
        }

        /// <summary>DELETE_ENTITY (numbers below 512 are refused); the DCL bytes to send.</summary>
        public byte[] DeleteEntity(uint entity)
        {
            UIntPtr len;
            Errors.Check(NativeMethods.sc_runtime_delete_entity(
                H, entity, message, (UIntPtr)message.Length, out len));
            return Message(len);
        }

        // ---- Interpolation (docs/INTERPOLATION.md) -------------------------------------------

        /// <summary>Turns interpolation on (null: the defaults) or changes its options.</summary>
        public void EnableInterpolation(InterpolationOptions options = null)
        {
            IntPtr h = H;
            if (options == null)
            {
                Errors.Check(NativeMethods.sc_runtime_enable_interpolation_defaults(h, IntPtr.Zero));
                return;
            }
            var n = options.ToNative();
            Errors.Check(NativeMethods.sc_runtime_enable_interpolation(h, ref n));
        }

        public void DisableInterpolation()
        {
            Errors.Check(NativeMethods.sc_runtime_disable_interpolation(H));
        }

        public bool InterpolationEnabled
        {
            get
            {
                int on = NativeMethods.sc_runtime_interpolation_enabled(H);
                Errors.Check(on);
                return on == 1;
            }
        }

        /// <summary>Update, then the presentation at renderTimeUs (the receive times' clock).</summary>
        public void UpdateInterpolated(long renderTimeUs)
        {
            Errors.Check(NativeMethods.sc_runtime_update_interpolated(H, renderTimeUs));
        }

        public int InterpolatedEntityCount
        {
            get { return (int)NativeMethods.sc_runtime_interpolated_entity_count(H); }
        }

        public bool TryGetInterpolatedWorldMatrix(uint entity, float[] m16)
        {
            IntPtr h = H;
            CheckMatrix(m16);
            return Found(NativeMethods.sc_runtime_interpolated_world_matrix(h, entity, m16));
        }

        public bool TryCopyInterpolatedWorld(uint[] entities, float[] matrices, out int count)
        { return TryCopy(List.InterpolatedWorld, entities, matrices, out count); }
        public int CopyInterpolatedWorld(ref uint[] entities, ref float[] matrices)
        { return CopyGrowing(List.InterpolatedWorld, ref entities, ref matrices); }
        public bool TryCopyInterpolatedChanged(uint[] entities, out int count)
        { return TryCopy(List.InterpolatedChanged, entities, null, out count); }
        public int CopyInterpolatedChanged(ref uint[] entities)
        { float[] none = null; return CopyGrowing(List.InterpolatedChanged, ref entities, ref none); }
        public bool TryCopyInterpolatedChangedWorld(uint[] entities, float[] matrices, out int count)
        { return TryCopy(List.InterpolatedChangedWorld, entities, matrices, out count); }
        public int CopyInterpolatedChangedWorld(ref uint[] entities, ref float[] matrices)
        { return CopyGrowing(List.InterpolatedChangedWorld, ref entities, ref matrices); }
        public bool TryCopyInterpolatedAdded(uint[] entities, out int count)
        { return TryCopy(List.InterpolatedAdded, entities, null, out count); }
        public int CopyInterpolatedAdded(ref uint[] entities)
        { float[] none = null; return CopyGrowing(List.InterpolatedAdded, ref entities, ref none); }
        public bool TryCopyInterpolatedRemoved(uint[] entities, out int count)
        { return TryCopy(List.InterpolatedRemoved, entities, null, out count); }
        public int CopyInterpolatedRemoved(ref uint[] entities)
        { float[] none = null; return CopyGrowing(List.InterpolatedRemoved, ref entities, ref none); }

        public InterpolationStats InterpolationStats
        {
            get
            {
                var n = new NativeInterpolationStats();
                n.StructSize = (uint)Marshal.SizeOf(typeof(NativeInterpolationStats));
                Errors.Check(NativeMethods.sc_runtime_interpolation_stats(H, ref n));
                return InterpolationStats.From(n);
            }
        }

        // ---- Helpers -------------------------------------------------------------------------

        private enum List
        {
            World, Changed, ChangedWorld, Added, Removed, InterpolatedWorld, InterpolatedChanged,
            InterpolatedChangedWorld, InterpolatedAdded, InterpolatedRemoved,
        }

        private static bool HasMatrices(List list)
        {
            return list == List.World || list == List.ChangedWorld ||
                   list == List.InterpolatedWorld || list == List.InterpolatedChangedWorld;
        }

        // One C ABI call; the capacity is what both arrays hold.
        private int CopyRaw(List list, uint[] ids, float[] m, out UIntPtr count)
        {
            IntPtr h = H;
            long cap = ids == null ? 0 : ids.Length;
            if (HasMatrices(list)) cap = Math.Min(cap, m == null ? 0 : m.Length / 16);
            var c = (UIntPtr)(ulong)cap;
            switch (list)
            {
                case List.World: return NativeMethods.sc_runtime_copy_world(h, ids, m, c, out count);
                case List.Changed: return NativeMethods.sc_runtime_copy_changed(h, ids, c, out count);
                case List.ChangedWorld:
                    return NativeMethods.sc_runtime_copy_changed_world(h, ids, m, c, out count);
                case List.Added: return NativeMethods.sc_runtime_copy_added(h, ids, c, out count);
                case List.Removed: return NativeMethods.sc_runtime_copy_removed(h, ids, c, out count);
                case List.InterpolatedWorld:
                    return NativeMethods.sc_runtime_copy_interpolated_world(h, ids, m, c, out count);
                case List.InterpolatedChanged:
                    return NativeMethods.sc_runtime_copy_interpolated_changed(h, ids, c, out count);
                case List.InterpolatedChangedWorld:
                    return NativeMethods.sc_runtime_copy_interpolated_changed_world(h, ids, m, c,
                                                                                    out count);
                case List.InterpolatedAdded:
                    return NativeMethods.sc_runtime_copy_interpolated_added(h, ids, c, out count);
                default:
                    return NativeMethods.sc_runtime_copy_interpolated_removed(h, ids, c, out count);
            }
        }

        private bool TryCopy(List list, uint[] ids, float[] m, out int count)
        {
            UIntPtr n;
            int status = CopyRaw(list, ids, m, out n);
            if (status != (int)Status.BufferTooSmall) Errors.Check(status);
            count = (int)n;
            return status == (int)Status.Ok;
        }

        private int CopyGrowing(List list, ref uint[] ids, ref float[] m)
        {
            int count;
            while (!TryCopy(list, ids, m, out count))
            {
                // Nothing changes between the two calls (one thread per handle): the second fits.
                if (ids == null || ids.Length < count) ids = new uint[count];
                if (HasMatrices(list) && (m == null || m.Length < 16 * count))
                    m = new float[16 * count];
            }
            return count;
        }

        private uint[] Listed(List list)
        {
            uint[] ids = null;
            float[] none = null;
            int count = CopyGrowing(list, ref ids, ref none);
            if (ids == null) return new uint[0];
            if (ids.Length == count) return ids;
            var exact = new uint[count];
            Array.Copy(ids, exact, count);
            return exact;
        }

        private byte[] Message(UIntPtr len)
        {
            var bytes = new byte[(int)len];
            Array.Copy(message, bytes, bytes.Length);
            return bytes;
        }

        private static bool Found(int status)
        {
            if (status == (int)Status.NotFound) return false;
            Errors.Check(status);
            return true;
        }

        private static void CheckMatrix(float[] m16)
        {
            if (m16 == null || m16.Length < 16)
                throw Errors.Misuse("SceneCrdt.Runtime: a world matrix needs a float[16]");
        }

        private static UIntPtr Length(byte[] data)
        {
            return (UIntPtr)(data == null ? 0 : data.Length);
        }
    }
}
