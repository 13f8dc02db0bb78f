// SPDX-License-Identifier: Apache-2.0
// The component reads of the SceneCrdt binding (docs/COMPONENTS.md), run by SceneCrdtTests.exe:
// the golden stream of a real @dcl/ecs 7.28 Engine (tests/data/components, turned into lines
// by bindings/components_golden.py) gives the bytes its schemas serialized and the lists of its
// own diff; values, grow-only sets, absent keys and the lists through hand-made messages; the
// no-allocation forms allocate nothing once their arrays are large enough.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using SceneCrdt;

internal static class ComponentTests
{
    private static void Expect(bool condition, string what)
    {
        if (!condition) throw new Exception("expected: " + what);
    }

    private static string Hex(byte[] b)
    {
        return b == null ? "null" : BitConverter.ToString(b).Replace("-", "").ToLowerInvariant();
    }

    private static string Pairs(ComponentRef[] pairs)
    {
        return string.Join(" ", pairs.Select(p => p.Entity + ":" + p.Component));
    }

    // A DCL message: header (length, type), entity, component, timestamp, payload size, payload.
    private static byte[] Message(uint type, uint entity, uint component, uint timestamp,
                                  byte[] data)
    {
        var m = new List<byte>();
        foreach (uint v in new[] { 24u + (uint)data.Length, type, entity, component, timestamp,
                                   (uint)data.Length })
            m.AddRange(BitConverter.GetBytes(v));  // little-endian on every Unity platform
        m.AddRange(data);
        return m.ToArray();
    }

    internal static void GoldenDclEcsStream(string dclPath, string goldenPath)
    {
        byte[] stream = File.ReadAllBytes(dclPath);
        string[] lines = File.ReadAllLines(goldenPath);
        using (var rt = new Runtime())
        {
            int frames = 0;
            foreach (string line in lines)
            {
                string[] w = line.Split(' ');
                string what = "frame " + (frames - 1) + ": " + line;
                switch (w[0])
                {
                    case "frame":
                    {
                        int offset = int.Parse(w[1]), length = int.Parse(w[2]);
                        var chunk = new byte[length];
                        Array.Copy(stream, offset, chunk, 0, length);
                        rt.Apply(chunk);
                        rt.Update();
                        ++frames;
                        break;
                    }
                    case "value":
                    {
                        byte[] payload;
                        Expect(rt.TryGetComponent(uint.Parse(w[1]), uint.Parse(w[2]), out payload),
                               what);
                        Expect(Hex(payload) == (w[3] == "-" ? "" : w[3]), what + ", got " + Hex(payload));
                        break;
                    }
                    case "grow":
                    {
                        AppendValue[] values = rt.GetAppendValues(uint.Parse(w[1]), uint.Parse(w[2]));
                        string got = string.Join(",", values.Select(v => Hex(v.Bytes))
                                                           .OrderBy(h => h, StringComparer.Ordinal));
                        Expect(got == w[3], what + ", got " + got);
                        break;
                    }
                    default:
                    {
                        ComponentRef[] list = w[0] == "changed" ? rt.ChangedComponents()
                                              : w[0] == "added" ? rt.AddedComponents()
                                                                : rt.RemovedComponents();
                        string want = string.Join(" ", w.Skip(1));
                        Expect(Pairs(list) == want, what + ", got '" + Pairs(list) + "'");
                        break;
                    }
                }
            }
            Expect(frames == 4, "4 frames");
        }
    }

    internal static void ValuesSetsAndLists()
    {
        using (var rt = new Runtime())
        {
            var stream = new List<byte>();
            stream.AddRange(Message(1, 512, 1018, 1, new byte[] { 1, 2, 3 }));
            stream.AddRange(Message(1, 513, 1018, 1, new byte[0]));
            stream.AddRange(Message(4, 512, 1063, 0, new byte[] { 9 }));
            stream.AddRange(Message(1, 514, 2000, 1, new byte[1000]));  // larger than the scratch
            rt.Apply(stream.ToArray());
            byte[] payload;
            Expect(rt.TryGetComponent(512, 1018, out payload) && Hex(payload) == "010203",
                   "a value before any Update");
            Expect(rt.TryGetComponent(513, 1018, out payload) && payload.Length == 0,
                   "an empty payload is a value");
            Expect(rt.TryGetComponent(514, 2000, out payload) && payload.Length == 1000,
                   "a 1000-byte value");
            Expect(!rt.TryGetComponent(515, 1018, out payload) && payload == null, "absent");
            SceneCrdtException e = null;
            try { rt.TryGetComponent(512, 1063, out payload); }
            catch (SceneCrdtException x) { e = x; }
            Expect(e != null && e.Status == Status.GrowOnly && e.StatusName == "SC_E_GROW_ONLY",
                   "a grow-only set throws Status.GrowOnly");
            AppendValue[] values = rt.GetAppendValues(512, 1063);
            Expect(values.Length == 1 && values[0].Timestamp == 0 && Hex(values[0].Bytes) == "09",
                   "the set's value");
            Expect(rt.GetAppendValues(512, 1018) == null, "no set on a value");
            Expect(rt.ChangedComponents().Length == 0, "no lists before the first Update");
            rt.Update();
            Expect(Pairs(rt.AddedComponents()) == "512:1018 512:1063 513:1018 514:2000",
                   "added, sorted: " + Pairs(rt.AddedComponents()));
            rt.Apply(new byte[] { 12, 0, 0, 0, 3, 0, 0, 0, 0, 2, 0, 0 });  // DELETE_ENTITY 512
            rt.Update();
            Expect(Pairs(rt.RemovedComponents()) == "512:1018 512:1063", "removed");
            Expect(rt.ChangedComponents().Length == 0, "nothing changed");

            // The reusing forms allocate nothing once their arrays are large enough.
            byte[] buffer = new byte[4];
            uint[] ids = new uint[8], components = new uint[8];
            for (int round = 0; round < 2; ++round)  // round 0 warms the JIT up
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                int length = 0, count = 0;
                for (int i = 0; i < 100; ++i)
                {
                    length = rt.CopyComponent(513, 1018, ref buffer);
                    count = rt.CopyRemovedComponents(ref ids, ref components);
                    rt.CopyChangedComponents(ref ids, ref components);
                }
                long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
                if (round == 1) Expect(allocated == 0, "no allocation, got " + allocated + " bytes");
                Expect(length == 0 && count == 2, "reads in the loop");
            }
            Expect(rt.CopyComponent(514, 2000, ref buffer) == 1000 && buffer.Length >= 1000,
                   "CopyComponent grows the buffer");
            int n;
            Expect(!rt.TryCopyRemovedComponents(new uint[1], new uint[1], out n) && n == 2,
                   "too small: false with the count needed");
        }
    }
}
