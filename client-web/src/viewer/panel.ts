// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's side panel: connection and scene figures, the effective tree (bounded to
// MAX_ROWS rows so a 10 000-entity scene stays responsive) and the selected entity's local
// Transform and world matrix.
import type { NodeInfo, Transform } from "../wasm.js";

const MAX_ROWS = 1500;

export interface PanelFigures {
  scene: string;
  state: string;
  entities: number;
  sessions: number | null;
  updatesPerSecond: number;
  frameMs: number;
  parked: number;
  autoFrame: boolean;
}

export interface Selection {
  entity: number;
  info: NodeInfo | null;
  local: Transform | null;
  world: Float32Array | null;
}

const fmt = (v: number) => (Math.abs(v) < 1e-9 ? "0" : v.toPrecision(5));

export class Panel {
  private readonly figures: HTMLElement;
  private readonly tree: HTMLElement;
  private readonly details: HTMLElement;

  constructor(root: HTMLElement, private readonly onSelect: (entity: number) => void) {
    root.innerHTML =
      '<div id="figures"></div><h3>selected</h3><pre id="details">click an entity or a tree row</pre>' +
      '<h3>tree</h3><div id="tree"></div>';
    this.figures = root.querySelector("#figures")!;
    this.tree = root.querySelector("#tree")!;
    this.details = root.querySelector("#details")!;
    this.tree.addEventListener("click", (e) => {
      const row = (e.target as HTMLElement).closest("[data-entity]") as HTMLElement | null;
      if (row) this.onSelect(Number(row.dataset.entity));
    });
  }

  showFigures(f: PanelFigures): void {
    this.figures.innerHTML =
      `<b>${escapeHtml(f.scene)}</b> <span class="${f.state}">${f.state}</span><br>` +
      `entities ${f.entities} &middot; parked ${f.parked} &middot; sessions ${f.sessions ?? "?"}<br>` +
      `updates ${f.updatesPerSecond.toFixed(1)}/s &middot; frame ${f.frameMs.toFixed(2)} ms<br>` +
      `<span class="keys">drag: orbit &middot; shift/right-drag: pan &middot; wheel: zoom<br>` +
      `F: frame all (auto-framing ${f.autoFrame ? "on" : "off"}) &middot; L: labels &middot; B: true size / markers &middot; Esc: deselect</span>`;
  }

  /** Rebuilds the tree from each entity's effective parent (children sorted by id). */
  showTree(entities: Uint32Array, infos: Map<number, NodeInfo>, selected: number): void {
    const children = new Map<number, number[]>();
    for (const e of entities) {
      const p = infos.get(e)?.effectiveParent ?? 0;
      let list = children.get(p);
      if (!list) children.set(p, (list = []));
      list.push(e);
    }
    const rows: string[] = [];
    const stack: [number, number][] = (children.get(0) ?? []).slice().reverse().map((e) => [e, 0]);
    while (stack.length > 0 && rows.length < MAX_ROWS) {
      const [e, depth] = stack.pop()!;
      const info = infos.get(e);
      const cls = e === selected ? "sel" : info?.parked ? "parked" : info?.placeholder ? "ph" : "";
      const tag = info?.parked ? " (parked)" : info?.placeholder ? " (placeholder)" : "";
      rows.push(`<div data-entity="${e}" class="${cls}" style="padding-left:${depth * 10}px">${e}${tag}</div>`);
      const kids = children.get(e);
      if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], depth + 1]);
    }
    if (entities.length > rows.length) rows.push(`<div>... ${entities.length - rows.length} more</div>`);
    this.tree.innerHTML = rows.join("");
  }

  showSelection(s: Selection | null): void {
    if (!s) {
      this.details.textContent = "click an entity or a tree row";
      return;
    }
    const lines = [`entity ${s.entity} (number ${s.entity & 0xffff}, version ${s.entity >>> 16})`];
    if (s.info) {
      lines.push(`effective parent ${s.info.effectiveParent}, declared ${s.info.declaredParent}` +
        `${s.info.parked ? ", PARKED (loop)" : ""}${s.info.placeholder ? ", placeholder" : ""}`);
    }
    if (s.local) {
      lines.push("local:", `  position ${s.local.position.map(fmt).join(" ")}`,
        `  rotation ${s.local.rotation.map(fmt).join(" ")}`, `  scale    ${s.local.scale.map(fmt).join(" ")}`);
    } else {
      lines.push("local: none");
    }
    if (s.world) {
      lines.push("world (rows):");
      for (let r = 0; r < 4; r++) lines.push(`  ${[0, 1, 2, 3].map((c) => fmt(s.world![c * 4 + r])).join("  ")}`);
    }
    this.details.textContent = lines.join("\n");
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}
