# Harness of the README.md replay/converge commands (docs/SNIPPETS.md): the streams they name,
# a.dcl, b.dcl (two seeded random scenes) and recording.dcl (examples/sample_scene.dcl).
scenecrdt gen --shape random --entities 30 --seed 1 -o a.dcl >/dev/null
scenecrdt gen --shape random --entities 30 --seed 2 -o b.dcl >/dev/null
cp examples/sample_scene.dcl recording.dcl
# @snippet
