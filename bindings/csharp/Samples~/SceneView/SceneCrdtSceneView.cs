// SPDX-License-Identifier: Apache-2.0
// A Unity sample (compiled only inside Unity: it is the one file that uses UnityEngine):
// joins a scene on a `scenecrdt serve` and keeps one GameObject per entity, placed each frame
// from the interpolated world matrices with one bulk copy (no allocation per entity). DCL
// scenes are left-handed like Unity, so the matrices apply as they are.
using System.Collections.Generic;
using SceneCrdt;
using UnityEngine;

public class SceneCrdtSceneView : MonoBehaviour
{
    public string url = "ws://127.0.0.1:7601";  // scenecrdt serve's default --http
    public string scene = "demo";
    public GameObject prefab;  // null: a cube

    private Client client;
    private readonly Dictionary<uint, GameObject> objects = new Dictionary<uint, GameObject>();
    private uint[] ids = new uint[1024];
    private float[] matrices = new float[16 * 1024];

    private void OnEnable()
    {
        client = new Client(url, scene);
        client.EnableInterpolation();
    }

    private void OnDisable()
    {
        client.Dispose();
        client = null;
        foreach (GameObject o in objects.Values) Destroy(o);
        objects.Clear();
    }

    private void Update()
    {
        client.Poll(0);
        client.UpdateInterpolated(SceneCrdt.Runtime.NowUs());
        SceneCrdt.Runtime replica = client.Runtime;

        int added = replica.CopyInterpolatedAdded(ref ids);
        for (int i = 0; i < added; ++i)
        {
            GameObject o = prefab != null ? Instantiate(prefab, transform)
                                          : GameObject.CreatePrimitive(PrimitiveType.Cube);
            o.transform.SetParent(transform, false);
            o.name = "entity " + ids[i];
            objects[ids[i]] = o;
        }
        int removed = replica.CopyInterpolatedRemoved(ref ids);
        for (int i = 0; i < removed; ++i)
        {
            GameObject o;
            if (objects.TryGetValue(ids[i], out o)) Destroy(o);
            objects.Remove(ids[i]);
        }
        int changed = replica.CopyInterpolatedChangedWorld(ref ids, ref matrices);
        var m = new Matrix4x4();
        for (int i = 0; i < changed; ++i)
        {
            GameObject o;
            if (!objects.TryGetValue(ids[i], out o)) continue;
            for (int k = 0; k < 16; ++k) m[k] = matrices[16 * i + k];  // both column-major
            o.transform.localPosition = m.GetColumn(3);
            o.transform.localRotation = m.rotation;
            o.transform.localScale = m.lossyScale;
        }
    }
}
