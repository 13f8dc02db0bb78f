// SPDX-License-Identifier: Apache-2.0
// The mono tests of the SceneCrdt binding (run by bindings/csharp/run_tests.sh against a built
// libscenecrdt): replays equal `scenecrdt replay --world` bit for bit, two Clients through a
// real `scenecrdt serve` (one writes, the other sees it), interpolation, and every misuse
// throwing SceneCrdtException without crashing. Also `--bench`: the per-call cost of a bulk
// copy (docs/BINDINGS.md). Plain C# (no test framework), so only mcs and mono are needed.
//
// Component reads: ComponentTests.cs.
//
// usage: SceneCrdtTests.exe [--url tcp://HOST:PORT] [--components GOLDEN.dcl GOLDEN.txt]
//                           (STREAM.dcl EXPECTED.txt)...
//        SceneCrdtTests.exe --bench STREAM.dcl CALLS
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using SceneCrdt;

internal static class SceneCrdtTests
{
    private static int failures;
    private static int passed;

    private static void Expect(bool condition, string what)
    {
        if (!condition) throw new Exception("expected: " + what);
    }

    private static void Run(string name, Action test)
    {
        try
        {
            test();
            ++passed;
            Console.WriteLine("PASS " + name);
        }
        catch (Exception e)
        {
            ++failures;
            Console.WriteLine("FAIL " + name + ": " + e);
        }
    }

    private static SceneCrdtException Throws(Action action, Status status, string what)
    {
        try
        {
            action();
        }
        catch (SceneCrdtException e)
        {
            Expect(e.Status == status, what + ": status " + e.StatusName + " (" + e.Message + ")");
            Expect(e.NativeMessage.Length > 0, what + ": a message");
            return e;
        }
        throw new Exception("expected SceneCrdtException " + status + ": " + what);
    }

    private static uint Bits(float f)
    {
        return BitConverter.ToUInt32(BitConverter.GetBytes(f), 0);
    }

    // ---- Replay equivalence ------------------------------------------------------------------

    private static void ReplayEqualsReplayWorld(string dcl, string expectedPath)
    {
        string[] lines = File.ReadAllLines(expectedPath);
        string hash = lines[0].Split(' ')[1];
        int count = int.Parse(lines[1].Split(' ')[1], CultureInfo.InvariantCulture);
        using (var rt = new Runtime())
        {
            rt.Apply(File.ReadAllBytes(dcl));
            rt.Update();
            Expect(rt.StateHash() == hash, "state hash " + hash);
            Expect(rt.EntityCount == count, "entity count " + count + ", got " + rt.EntityCount);
            uint[] ids = null;
            float[] m = null;
            int n = rt.CopyWorld(ref ids, ref m);
            Expect(n == count, "CopyWorld count");
            var one = new float[16];
            for (int i = 0; i < count; ++i)
            {
                string[] f = lines[2 + i].Split(' ');
                uint entity = uint.Parse(f[0], CultureInfo.InvariantCulture);
                Expect(ids[i] == entity, "entity " + entity + " at " + i + ", got " + ids[i]);
                Expect(rt.TryGetWorldMatrix(entity, one), "TryGetWorldMatrix " + entity);
                for (int k = 0; k < 16; ++k)
                {
                    uint want = uint.Parse(f[4 + k], NumberStyles.HexNumber);
                    Expect(Bits(m[16 * i + k]) == want && Bits(one[k]) == want,
                           "entity " + entity + " m[" + k + "] bits " + want.ToString("x8"));
                }
                NodeInfo info;
                Expect(rt.TryGetNodeInfo(entity, out info), "node info " + entity);
                Expect(info.EffectiveParent == uint.Parse(f[1], CultureInfo.InvariantCulture) &&
                           info.Parked == (f[2] == "1") && info.Placeholder == (f[3] == "1"),
                       "parent and flags of " + entity);
            }
            // A too-small array: false, the size needed, nothing written.
            int needed;
            var small = new uint[count > 0 ? count - 1 : 0];
            Expect(count == 0 || !rt.TryCopyWorld(small, new float[16 * small.Length], out needed) &&
                                     needed == count,
                   "TryCopyWorld with too little room");
            ApplyStats stats = rt.ApplyStats;
            Expect(stats.Calls == 1 && stats.DecodeErrors == 0, "apply stats");
        }
    }

    // ---- Local writes, lists, misuse ----------------------------------------------------------

    private static Transform At(float x, uint parent = 0)
    {
        return new Transform(new Vec3(x, 2, 3), Quat.Identity, new Vec3(1, 1, 1), parent);
    }

    private static void WritesAndLists()
    {
        using (var a = new Runtime())
        using (var b = new Runtime())
        {
            byte[] msg = a.WriteTransform(600, At(1));
            Expect(msg.Length > 0 && msg.Length <= 68, "a message to send");
            Expect(a.WriteTransform(600, At(1)).Length == 0, "an equal write sends nothing");
            b.Apply(msg);
            b.Update();
            Transform t;
            Expect(b.TryGetTransform(600, out t) && t.Position.X == 1 && t.Parent == 0,
                   "the write arrived");
            uint[] added = b.Added();
            Expect(added.Length == 1 && added[0] == 600, "added [600]");
            var ids = new uint[4];
            var m = new float[64];
            int n;
            Expect(b.TryCopyChangedWorld(ids, m, out n) && n == 1 && ids[0] == 600 &&
                       m[12] == 1 && m[13] == 2 && m[14] == 3,
                   "changed world: translation (1, 2, 3)");
            b.Apply(a.DeleteTransform(600));
            b.Update();
            uint[] removed = b.Removed();
            Expect(removed.Length == 1 && removed[0] == 600, "removed [600]");
            Expect(!b.TryGetWorldMatrix(600, new float[16]), "gone");
            Expect(!b.TryGetTransform(600, out t), "no Transform");
            Throws(() => a.DeleteEntity(5), Status.Refused, "reserved entity");
        }
    }

    private static void Misuse()
    {
        var rt = new Runtime();
        rt.Dispose();
        rt.Dispose();  // twice is fine
        Throws(() => rt.Update(), Status.InvalidArgument, "Update after Dispose");
        Throws(() => rt.StateHash(), Status.InvalidArgument, "StateHash after Dispose");
        Throws(() => { int n; rt.TryCopyWorld(new uint[1], new float[16], out n); },
               Status.InvalidArgument, "copy after Dispose");
        using (var live = new Runtime())
        {
            SceneCrdtException e = Throws(() => live.Apply(new byte[] { 200, 0, 0, 0, 1 }),
                                          Status.Decode, "malformed stream");
            Expect(e.NativeMessage.Contains("offset"), "the byte offset: " + e.NativeMessage);
            Expect(live.ApplyStats.DecodeErrors == 1, "decode error counted");
            Throws(() => live.TryGetWorldMatrix(600, new float[3]), Status.InvalidArgument,
                   "a float[3] matrix");
            Throws(() => live.TryGetWorldMatrix(600, null), Status.InvalidArgument, "null matrix");
            Throws(() => live.UpdateInterpolated(long.MaxValue), Status.InvalidArgument,
                   "a render time out of range");
            var bad = InterpolationOptions.Default();
            bad.IntervalMultiple = 0.5;
            Throws(() => live.EnableInterpolation(bad), Status.InvalidArgument, "bad options");
            live.Apply(null);  // an empty batch
            live.Update();
            Expect(live.EntityCount == 0 && live.Changed().Length == 0, "still empty");
        }
        Throws(() => new Client("nope://127.0.0.1:1", "s"), Status.InvalidArgument, "bad URL");
        Throws(() => new Client("tcp://", "s"), Status.InvalidArgument, "URL without host");
        Throws(() => new Client(null, "s"), Status.InvalidArgument, "null URL");
        // A client to a port nobody listens on: connecting is retried, nothing throws.
        var c = new Client("tcp://127.0.0.1:1", "s");
        Expect(c.Poll(0) >= 0 && !c.StateReady && !c.Connected, "not connected");
        Runtime view = c.Runtime;
        Expect(view.IsView, "a view");
        Throws(() => view.Apply(new byte[0]), Status.ReadOnly, "apply through the view");
        Throws(() => view.WriteTransform(600, At(1)), Status.ReadOnly, "write through the view");
        view.Dispose();  // a view is never freed here
        Expect(view.EntityCount == 0, "the view still reads");
        c.Dispose();
        Throws(() => c.Poll(0), Status.InvalidArgument, "Poll after Dispose");
        Throws(() => view.Update(), Status.InvalidArgument, "the view after its Client");
        Throws(() => { var unused = c.Runtime; }, Status.InvalidArgument, "Runtime after Dispose");
        // Finalizers free what was never disposed.
        for (int i = 0; i < 50; ++i) new Runtime().Apply(new Runtime().WriteTransform(600, At(i)));
        GC.Collect();
        GC.WaitForPendingFinalizers();
    }

    // ---- No allocation in the bulk paths ----------------------------------------------------

    private static void BulkCopiesDoNotAllocate()
    {
        using (var sender = new Runtime())
        using (var rt = new Runtime())
        {
            rt.EnableInterpolation();
            for (uint e = 600; e < 700; ++e) rt.Apply(sender.WriteTransform(e, At(e)));
            uint[] ids = new uint[128];
            float[] m = new float[16 * 128];
            var one = new float[16];
            int n = 0;
            long frame = 1000000;
            for (int round = 0; round < 2; ++round)  // round 0 warms the JIT up
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < 100; ++i)
                {
                    rt.UpdateInterpolated(frame += 16000);
                    rt.TryCopyWorld(ids, m, out n);
                    rt.CopyChangedWorld(ref ids, ref m);
                    rt.CopyInterpolatedChangedWorld(ref ids, ref m);
                    rt.CopyInterpolatedAdded(ref ids);
                    rt.CopyInterpolatedRemoved(ref ids);
                    rt.TryGetWorldMatrix(650, one);
                    rt.TryGetInterpolatedWorldMatrix(650, one);
                }
                long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
                if (round == 1) Expect(allocated == 0, "no allocation, got " + allocated + " bytes");
            }
            Expect(n == 100, "100 entities copied");
        }
    }

    // ---- Interpolation -------------------------------------------------------------------------

    private static void Interpolation()
    {
        using (var sender = new Runtime())
        using (var rt = new Runtime())
        {
            var options = InterpolationOptions.Default();
            options.FixedDelayUs = 100000;
            rt.EnableInterpolation(options);
            Expect(rt.InterpolationEnabled, "enabled");
            const long t0 = 1000000;
            rt.ApplyAt(sender.WriteTransform(600, At(0)), t0);
            rt.ApplyAt(sender.WriteTransform(600, At(1)), t0 + 50000);
            var m = new float[16];
            rt.UpdateInterpolated(t0 + 100000 + 25000);
            Expect(rt.TryGetInterpolatedWorldMatrix(600, m), "interpolated matrix");
            Expect(m[12] > 0.1f && m[12] < 0.9f, "halfway between 0 and 1, got " + m[12]);
            Expect(rt.TryGetWorldMatrix(600, m) && m[12] == 1, "the replica is exact");
            rt.UpdateInterpolated(t0 + 100000 + 50000);  // playback at the newest batch
            Expect(rt.TryGetInterpolatedWorldMatrix(600, m) && Math.Abs(m[12] - 1) < 1e-6,
                   "arrived at 1, got " + m[12]);
            uint[] ids = null;
            float[] all = null;
            Expect(rt.CopyInterpolatedWorld(ref ids, ref all) == 1 && ids[0] == 600, "one entity");
            InterpolationStats stats = rt.InterpolationStats;
            Expect(stats.Frames == 2 && stats.TrackedEntities == 1, "stats: 2 frames, 1 entity");
            rt.DisableInterpolation();
            Expect(!rt.InterpolationEnabled && rt.InterpolationStats.Frames == 0, "off");
        }
    }

    // ---- Two clients through a real server -------------------------------------------------------

    private static void PollUntil(Func<bool> done, string what, params Client[] clients)
    {
        var clock = Stopwatch.StartNew();
        while (!done())
        {
            if (clock.ElapsedMilliseconds > 20000) throw new Exception("timed out: " + what);
            foreach (Client c in clients) c.Poll(20);
        }
    }

    private static void TwoClients(string url)
    {
        string scene = "csharp-" + Process.GetCurrentProcess().Id;
        using (var writer = new Client(url, scene))
        using (var reader = new Client(url, scene))
        {
            PollUntil(() => writer.StateReady && reader.StateReady, "both joined", writer, reader);
            reader.EnableInterpolation();
            writer.WriteTransform(700, At(4));
            writer.WriteTransform(701, At(5, 700));
            writer.Flush();
            var m = new float[16];
            bool sawChange = false;
            var ids = new uint[8];
            var ms = new float[128];
            PollUntil(() => {
                reader.UpdateInterpolated(Runtime.NowUs());
                int n;
                if (reader.Runtime.TryCopyChangedWorld(ids, ms, out n) && n > 0)
                    sawChange |= Array.IndexOf(ids, 701u, 0, n) >= 0;
                return reader.Runtime.TryGetWorldMatrix(701, m);
            }, "the reader sees 701", writer, reader);
            Expect(m[12] == 9 && m[13] == 4 && m[14] == 6, "701 under 700: (9, 4, 6), got " +
                                                            m[12] + " " + m[13] + " " + m[14]);
            Expect(sawChange, "701 in the reader's changed list");
            // The presentation shows it a short delay (100 ms at first) behind the replica.
            PollUntil(() => {
                reader.UpdateInterpolated(Runtime.NowUs());
                return reader.TryGetInterpolatedWorldMatrix(701, m);
            }, "the interpolated view shows 701", writer, reader);
            Expect(m[12] == 9 && m[13] == 4 && m[14] == 6, "interpolated 701 at (9, 4, 6)");
            NodeInfo info;
            Expect(reader.Runtime.TryGetNodeInfo(701, out info) && info.EffectiveParent == 700,
                   "effective parent 700");
            writer.DeleteEntity(701);
            // With interpolation on, UpdateInterpolated (not Poll) updates the replica's matrices.
            PollUntil(() => {
                reader.UpdateInterpolated(Runtime.NowUs());
                return !reader.Runtime.TryGetWorldMatrix(701, m);
            }, "the reader loses 701", writer, reader);
            PollUntil(() => reader.Runtime.StateHash() == writer.Runtime.StateHash(),
                      "equal state hashes", writer, reader);
            Expect(writer.Stats.Connects >= 1 && reader.Stats.LiveFrames >= 1, "stats");
            Expect(writer.Connected && reader.Connected, "connected");
        }
    }

    // ---- Benchmark -------------------------------------------------------------------------------

    private static int Bench(string dcl, int calls)
    {
        using (var rt = new Runtime())
        {
            rt.Apply(File.ReadAllBytes(dcl));
            rt.Update();
            int count = rt.EntityCount;
            var ids = new uint[count];
            var m = new float[16 * count];
            var samples = new double[calls];
            int n;
            for (int i = 0; i < 20; ++i) rt.TryCopyWorld(ids, m, out n);  // JIT, caches
            long before = GC.CollectionCount(0);
            for (int i = 0; i < calls; ++i)
            {
                long start = Stopwatch.GetTimestamp();
                if (!rt.TryCopyWorld(ids, m, out n) || n != count) return 1;
                samples[i] = (Stopwatch.GetTimestamp() - start) * 1e6 / Stopwatch.Frequency;
            }
            Array.Sort(samples);
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
                                            "csharp copy_world entities={0} calls={1} " +
                                                "median_us={2:F1} min_us={3:F1} gen0_gcs={4}",
                                            count, calls, samples[calls / 2], samples[0],
                                            GC.CollectionCount(0) - before));
        }
        return 0;
    }

    private static int Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "--bench")
            return Bench(args[1], int.Parse(args[2], CultureInfo.InvariantCulture));
        string url = null, goldenDcl = null, goldenText = null;
        var streams = new List<string>();
        for (int i = 0; i < args.Length; ++i)
        {
            if (args[i] == "--url" && i + 1 < args.Length) url = args[++i];
            else if (args[i] == "--components" && i + 2 < args.Length)
            {
                goldenDcl = args[++i];
                goldenText = args[++i];
            }
            else streams.Add(args[i]);
        }
        Expect(streams.Count % 2 == 0, "pairs of STREAM.dcl EXPECTED.txt");
        Console.WriteLine("SceneCrdt C# tests, libscenecrdt ABI " + Runtime.AbiVersion);
        for (int i = 0; i < streams.Count; i += 2)
        {
            string dcl = streams[i], expected = streams[i + 1];
            Run("ReplayEqualsReplayWorld " + Path.GetFileName(dcl),
                () => ReplayEqualsReplayWorld(dcl, expected));
        }
        Run("WritesAndLists", WritesAndLists);
        Run("Misuse", Misuse);
        Run("Interpolation", Interpolation);
        Run("BulkCopiesDoNotAllocate", BulkCopiesDoNotAllocate);
        Run("ComponentValuesSetsAndLists", ComponentTests.ValuesSetsAndLists);
        if (goldenDcl != null)
        {
            Run("ComponentsGoldenDclEcsStream",
                () => ComponentTests.GoldenDclEcsStream(goldenDcl, goldenText));
        }
        if (url != null) Run("TwoClients " + url, () => TwoClients(url));
        Console.WriteLine(passed + " passed, " + failures + " failed");
        return failures == 0 && passed > 0 ? 0 : 1;
    }
}
