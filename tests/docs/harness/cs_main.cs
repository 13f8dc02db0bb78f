// Harness of the README.md C# snippet (docs/SNIPPETS.md): the snippet is Main's body, its
// client joins the runner's server; `Upload` is the renderer's (here: nothing). Its frame loop
// runs until the runner stops it (`loop`).
public static class Program {
  static void Upload(uint entity, float[] matrices, int at) {}

  public static void Main() {
    // @snippet
  }
}
