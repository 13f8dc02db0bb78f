// SPDX-License-Identifier: Apache-2.0
// The value types of the SceneCrdt namespace: Vec3, Quat and Transform (the wire Transform,
// laid out as the C ABI's sc_transform so it crosses without conversion), the status codes, the
// component pairs and grow-only values, the node flags, the apply, interpolation and client statistics, and the interpolation options.
using System.Runtime.InteropServices;

namespace SceneCrdt
{
    /// <summary>The C ABI status codes (docs/C-ABI.md "Conventions"); values never change.</summary>
    public enum Status
    {
        Ok = 0,
        InvalidArgument = -1,
        NotFound = -2,
        BufferTooSmall = -3,
        Decode = -4,
        Refused = -5,
        ReadOnly = -6,
        NoMemory = -7,
        Broken = -8,
        Internal = -9,
        Closed = -10,
        Unsupported = -11,
        Full = -12,
        GrowOnly = -13,
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Vec3
    {
        public float X, Y, Z;
        public Vec3(float x, float y, float z) { X = x; Y = y; Z = z; }
        public override string ToString() { return "(" + X + ", " + Y + ", " + Z + ")"; }
    }

    /// <summary>A rotation quaternion x y z w, as on the wire (used as given, not normalised).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Quat
    {
        public float X, Y, Z, W;
        public Quat(float x, float y, float z, float w) { X = x; Y = y; Z = z; W = w; }
        public static Quat Identity { get { return new Quat(0, 0, 0, 1); } }
    }

    /// <summary>
    /// One entity's replicated Transform (component 1) in metres: the C ABI's sc_transform
    /// (44 bytes, no padding). Parent is the declared parent entity, 0 = the scene root.
    /// </summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Transform
    {
        public Vec3 Position;
        public Quat Rotation;
        public Vec3 Scale;
        public uint Parent;

        public Transform(Vec3 position, Quat rotation, Vec3 scale, uint parent = 0)
        {
            Position = position;
            Rotation = rotation;
            Scale = scale;
            Parent = parent;
        }

        /// <summary>At the origin, no rotation, scale 1, under the root.</summary>
        public static Transform Identity
        {
            get { return new Transform(new Vec3(0, 0, 0), Quat.Identity, new Vec3(1, 1, 1)); }
        }
    }

    /// <summary>Where an entity sits in the effective tree after the last update.</summary>
    public struct NodeInfo
    {
        public uint EffectiveParent;  // 0 = root; loop members are parked at root
        public uint DeclaredParent;   // the Transform's parent; 0 for placeholders
        public bool Parked;           // member of a parenting loop, shown at root
        public bool Placeholder;      // no Transform but has children: identity at root
    }

    /// <summary>One (entity, component) pair of the component lists (docs/COMPONENTS.md).</summary>
    public struct ComponentRef
    {
        public uint Entity;
        public uint Component;
        public ComponentRef(uint entity, uint component) { Entity = entity; Component = component; }
        public override string ToString() { return Entity + ":" + Component; }
    }

    /// <summary>One value of a grow-only (APPEND_VALUE) set.</summary>
    public struct AppendValue
    {
        public uint Timestamp;
        public byte[] Bytes;
    }

    /// <summary>Totals of what Apply did through one Runtime (sc_apply_stats).</summary>
    public struct ApplyStats
    {
        public ulong Calls, Messages, Changed, Ignored, Refused, DecodeErrors;
    }

    /// <summary>
    /// The interpolation options (docs/INTERPOLATION.md); Default() holds the library's
    /// defaults. Times in microseconds.
    /// </summary>
    public sealed class InterpolationOptions
    {
        public float SnapDistance;
        public long FixedDelayUs, InitialDelayUs, MinDelayUs, MaxDelayUs;
        public double IntervalMultiple, JitterMultiple, CatchUp, SlowDown;
        public long MaxExtrapolationUs, MaxIntervalUs;

        public static InterpolationOptions Default()
        {
            var n = new NativeInterpolationOptions();
            n.StructSize = (uint)Marshal.SizeOf(typeof(NativeInterpolationOptions));
            Errors.Check(NativeMethods.sc_interpolation_options_default(ref n));
            return new InterpolationOptions {
                SnapDistance = n.SnapDistance, FixedDelayUs = n.FixedDelayUs,
                InitialDelayUs = n.InitialDelayUs, MinDelayUs = n.MinDelayUs,
                MaxDelayUs = n.MaxDelayUs, IntervalMultiple = n.IntervalMultiple,
                JitterMultiple = n.JitterMultiple, CatchUp = n.CatchUp, SlowDown = n.SlowDown,
                MaxExtrapolationUs = n.MaxExtrapolationUs, MaxIntervalUs = n.MaxIntervalUs,
            };
        }

        internal NativeInterpolationOptions ToNative()
        {
            return new NativeInterpolationOptions {
                StructSize = (uint)Marshal.SizeOf(typeof(NativeInterpolationOptions)),
                SnapDistance = SnapDistance, FixedDelayUs = FixedDelayUs,
                InitialDelayUs = InitialDelayUs, MinDelayUs = MinDelayUs, MaxDelayUs = MaxDelayUs,
                IntervalMultiple = IntervalMultiple, JitterMultiple = JitterMultiple,
                CatchUp = CatchUp, SlowDown = SlowDown, MaxExtrapolationUs = MaxExtrapolationUs,
                MaxIntervalUs = MaxIntervalUs,
            };
        }
    }

    /// <summary>What the interpolated presentation did (sc_interpolation_stats).</summary>
    public struct InterpolationStats
    {
        public uint BufferDepth, TrackedEntities, ActiveEntities;
        public long PlaybackTimeUs, DelayUs, TargetDelayUs, IntervalUs, JitterUs;
        public ulong Frames, StalledFrames, ExtrapolatedFrames, Snaps, EntitiesAdded,
            EntitiesRemoved, LateBatches, Resets, DroppedSamples, TimeRegressions;

        internal static InterpolationStats From(NativeInterpolationStats n)
        {
            return new InterpolationStats {
                BufferDepth = n.BufferDepth, TrackedEntities = n.TrackedEntities,
                ActiveEntities = n.ActiveEntities, PlaybackTimeUs = n.PlaybackTimeUs,
                DelayUs = n.DelayUs, TargetDelayUs = n.TargetDelayUs, IntervalUs = n.IntervalUs,
                JitterUs = n.JitterUs, Frames = n.Frames, StalledFrames = n.StalledFrames,
                ExtrapolatedFrames = n.ExtrapolatedFrames, Snaps = n.Snaps,
                EntitiesAdded = n.EntitiesAdded, EntitiesRemoved = n.EntitiesRemoved,
                LateBatches = n.LateBatches, Resets = n.Resets, DroppedSamples = n.DroppedSamples,
                TimeRegressions = n.TimeRegressions,
            };
        }
    }

    /// <summary>Connection counters of a Client since it was created (sc_client_stats).</summary>
    public struct ClientStats
    {
        public uint CurrentServer;
        public ulong Connects, Reconnects, Failovers, Resumes, Resyncs, PendingFrames,
            UnsentWrites, LiveFrames, BytesReceived, BytesSent;
    }
}
