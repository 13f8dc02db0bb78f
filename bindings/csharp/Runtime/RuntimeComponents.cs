// SPDX-License-Identifier: Apache-2.0
// Runtime's component reads (docs/COMPONENTS.md) over the C ABI's sc_runtime_get_component,
// sc_runtime_copy_append_values and sc_runtime_copy_{changed,added,removed}_components: any
// component's current payload (the bytes of its last winning PUT), the values of a grow-only
// set, and the (entity, component) pairs the last Update changed, added or removed. The
// allocating forms are for convenience; CopyComponent and CopyChangedComponents(ref ...)
// reuse the caller's arrays (no allocation per frame once they are large enough).
using System;

namespace SceneCrdt
{
    public sealed partial class Runtime
    {
        private byte[] componentScratch = new byte[256];

        /// <summary>
        /// The current value of component componentId of entity (the payload of its last winning
        /// PUT, exactly as sent; the Transform, id 1, as its 44 wire bytes), a new array. False
        /// (payload null) when it has none: never set, deleted, or the entity deleted. Throws
        /// SceneCrdtException with Status.GrowOnly for a grow-only set (GetAppendValues).
        /// </summary>
        public bool TryGetComponent(uint entity, uint componentId, out byte[] payload)
        {
            int length = CopyComponent(entity, componentId, ref componentScratch);
            if (length < 0)
            {
                payload = null;
                return false;
            }
            payload = new byte[length];
            Array.Copy(componentScratch, payload, length);
            return true;
        }

        /// <summary>
        /// The value's length, its bytes in buffer[0 .. length - 1]; buffer is replaced by a
        /// larger array only when the value does not fit. -1 when there is no value. Throws for
        /// a grow-only set, like TryGetComponent.
        /// </summary>
        public int CopyComponent(uint entity, uint componentId, ref byte[] buffer)
        {
            IntPtr h = H;
            if (buffer == null) buffer = new byte[256];
            while (true)
            {
                UIntPtr len;
                int status = NativeMethods.sc_runtime_get_component(h, entity, componentId, buffer,
                                                                    (UIntPtr)buffer.Length, out len);
                if (status == (int)Status.NotFound) return -1;
                if (status == (int)Status.BufferTooSmall)
                {
                    buffer = new byte[Math.Max((int)len, 2 * buffer.Length)];
                    continue;  // nothing changes in between (one thread per handle)
                }
                Errors.Check(status);
                return (int)len;
            }
        }

        /// <summary>
        /// The values of the grow-only (APPEND_VALUE) set of componentId on entity, ascending by
        /// (timestamp, bytes); null when there is none.
        /// </summary>
        public AppendValue[] GetAppendValues(uint entity, uint componentId)
        {
            IntPtr h = H;
            UIntPtr len;
            int status = NativeMethods.sc_runtime_copy_append_values(
                h, entity, componentId, componentScratch, (UIntPtr)componentScratch.Length, out len);
            if (status == (int)Status.NotFound) return null;
            if (status == (int)Status.BufferTooSmall)
            {
                componentScratch = new byte[Math.Max((int)len, 2 * componentScratch.Length)];
                status = NativeMethods.sc_runtime_copy_append_values(
                    h, entity, componentId, componentScratch, (UIntPtr)componentScratch.Length,
                    out len);
            }
            Errors.Check(status);
            // Records: uint32 timestamp, uint32 size (little-endian), the bytes.
            var values = new System.Collections.Generic.List<AppendValue>();
            int at = 0, total = (int)len;
            while (at + NativeMethods.AppendRecordHeaderBytes <= total)
            {
                uint timestamp = ReadU32(componentScratch, at);
                int size = (int)ReadU32(componentScratch, at + 4);
                at += NativeMethods.AppendRecordHeaderBytes;
                var bytes = new byte[size];
                Array.Copy(componentScratch, at, bytes, 0, size);
                values.Add(new AppendValue { Timestamp = timestamp, Bytes = bytes });
                at += size;
            }
            return values.ToArray();
        }

        // ---- The component lists of the last Update (every component but the Transform) ----
        // Changed: a value or set now whose state changed since the Update before (added ones
        // included). Added: absent at the Update before, present now. Removed: the reverse.
        // Sorted by entity, then component. TryCopy*: false with count = the number needed when
        // the arrays are too small (nothing written); Copy*(ref ...): grows them then.

        public ComponentRef[] ChangedComponents() { return Pairs(PairList.Changed); }
        public ComponentRef[] AddedComponents() { return Pairs(PairList.Added); }
        public ComponentRef[] RemovedComponents() { return Pairs(PairList.Removed); }

        public bool TryCopyChangedComponents(uint[] entities, uint[] components, out int count)
        { return TryCopyPairs(PairList.Changed, entities, components, out count); }
        public int CopyChangedComponents(ref uint[] entities, ref uint[] components)
        { return CopyPairsGrowing(PairList.Changed, ref entities, ref components); }
        public bool TryCopyAddedComponents(uint[] entities, uint[] components, out int count)
        { return TryCopyPairs(PairList.Added, entities, components, out count); }
        public int CopyAddedComponents(ref uint[] entities, ref uint[] components)
        { return CopyPairsGrowing(PairList.Added, ref entities, ref components); }
        public bool TryCopyRemovedComponents(uint[] entities, uint[] components, out int count)
        { return TryCopyPairs(PairList.Removed, entities, components, out count); }
        public int CopyRemovedComponents(ref uint[] entities, ref uint[] components)
        { return CopyPairsGrowing(PairList.Removed, ref entities, ref components); }

        private enum PairList { Changed, Added, Removed }

        private bool TryCopyPairs(PairList list, uint[] entities, uint[] components, out int count)
        {
            IntPtr h = H;
            long cap = Math.Min(entities == null ? 0 : entities.Length,
                                components == null ? 0 : components.Length);
            var c = (UIntPtr)(ulong)cap;
            UIntPtr n;
            int status =
                list == PairList.Changed
                    ? NativeMethods.sc_runtime_copy_changed_components(h, entities, components, c,
                                                                       out n)
                : list == PairList.Added
                    ? NativeMethods.sc_runtime_copy_added_components(h, entities, components, c,
                                                                     out n)
                    : NativeMethods.sc_runtime_copy_removed_components(h, entities, components, c,
                                                                       out n);
            if (status != (int)Status.BufferTooSmall) Errors.Check(status);
            count = (int)n;
            return status == (int)Status.Ok;
        }

        private int CopyPairsGrowing(PairList list, ref uint[] entities, ref uint[] components)
        {
            int count;
            while (!TryCopyPairs(list, entities, components, out count))
            {
                if (entities == null || entities.Length < count) entities = new uint[count];
                if (components == null || components.Length < count) components = new uint[count];
            }
            return count;
        }

        private ComponentRef[] Pairs(PairList list)
        {
            uint[] entities = null, components = null;
            int count = CopyPairsGrowing(list, ref entities, ref components);
            var pairs = new ComponentRef[count];
            for (int i = 0; i < count; i++) pairs[i] = new ComponentRef(entities[i], components[i]);
            return pairs;
        }

        private static uint ReadU32(byte[] b, int at)
        {
            return (uint)(b[at] | b[at + 1] << 8 | b[at + 2] << 16 | b[at + 3] << 24);
        }
    }
}
