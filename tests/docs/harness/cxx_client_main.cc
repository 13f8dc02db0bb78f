// Harness of the docs/CLIENT.md snippet (docs/SNIPPETS.md): the snippet is main's body, its
// client joins the runner's server; `Upload` is the renderer's (here: nothing). Its frame loop
// runs until the runner stops it (`loop`); a failed join returns 1.
#include <scenecrdt/client/client.h>

namespace {
template <typename Matrix>
void Upload(scenecrdt::protocol::EntityId, const Matrix&) {}
}  // namespace

int main() {
  // @snippet
}
