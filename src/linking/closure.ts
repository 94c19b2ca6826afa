/**
 * Join paths between chosen tables. Edges are declared foreign keys and, because many real
 * databases declare none (many have no FKs at all), inferred joins by column naming:
 * a column that has the name of another table's single-column key, `<table>_id`/`<table>id` next
 * to a table with `id`, or a shared key-like column (`emp_no`, `region_code`) that few tables have.
 */
import type { Table } from '../core/schema.js';
import { displayKey } from './documents.js';
import { splitWords, stem } from './words.js';

/** One join between two tables. */
export interface JoinEdge {
  from: string;
  to: string;
  /** Column pairs `[from column, to column]`. */
  columns: [string, string][];
  declared: boolean;
  /**
   * How sure the join is, in (0, 1]: 1 declared, 0.9 a key-name match, less for a shared column
   * name the more tables share it.
   */
  strength: number;
}

/** A shared column name counts as an inferred join only when at most this many tables have it. */
export const MAX_SHARED_KEY_TABLES = 60;

/** Column names that are never join keys by themselves. */
const GENERIC_COLUMNS: ReadonlySet<string> = new Set(
  'id name title description type status kind category date year month day created_at updated_at deleted_at created updated comment comments note notes value amount price quantity count total code label email phone address city state country zip url first_name last_name full_name middle_name display_name username user_name phone_number'.split(
    ' ',
  ),
);

/** Whether a column name looks like a key (`emp_no`, `customer_id`, `state_code`, `iso3`). */
function keyLike(name: string): boolean {
  const lower = name.toLowerCase();
  return /(^|_)?(id|key|code|no|num|number|uuid|name)$/.test(lower) && !GENERIC_COLUMNS.has(lower);
}

/** Undirected join graph over the tables of a schema. */
export class JoinGraph {
  private readonly adjacency = new Map<string, JoinEdge[]>();
  private readonly junctionShare = new Map<string, number>();
  private readonly holders = new Map<string, string[]>();
  private readonly columnsOf = new Map<string, string[]>();

  constructor(tables: readonly Table[]) {
    const byKey = new Map(tables.map((t) => [displayKey(t), t]));
    const add = (edge: JoinEdge) => {
      if (edge.from === edge.to) return;
      const list = this.adjacency.get(edge.from) ?? [];
      if (list.some((e) => e.to === edge.to && e.strength >= edge.strength)) return;
      list.push(edge);
      this.adjacency.set(edge.from, list);
      const back = this.adjacency.get(edge.to) ?? [];
      back.push({
        from: edge.to,
        to: edge.from,
        columns: edge.columns.map(([a, b]) => [b, a]),
        declared: edge.declared,
        strength: edge.strength,
      });
      this.adjacency.set(edge.to, back);
    };
    for (const table of tables) {
      for (const fk of table.foreignKeys) {
        const target = displayKey({ schema: fk.references.schema, name: fk.references.table });
        if (!byKey.has(target)) continue;
        add({
          from: displayKey(table),
          to: target,
          columns: fk.columns.map((c, i) => [c, fk.references.columns[i] ?? c]),
          declared: true,
          strength: 1,
        });
      }
    }
    for (const table of tables) {
      const keys = table.columns.filter(
        (c) => table.primaryKey.includes(c.name) || keyLike(c.name) || /(^|_)id$/i.test(c.name),
      ).length;
      this.junctionShare.set(displayKey(table), keys / Math.max(1, table.columns.length));
    }
    // Inferred joins.
    const byColumn = new Map<string, Table[]>();
    for (const table of tables) {
      for (const column of table.columns) {
        const list = byColumn.get(column.name) ?? [];
        list.push(table);
        byColumn.set(column.name, list);
      }
      this.columnsOf.set(displayKey(table), table.columns.map((c) => c.name).filter(keyLike));
    }
    for (const [name, list] of byColumn) if (keyLike(name)) this.holders.set(name, list.map(displayKey));
    // `<base>_id` / `<base>id` column names by the stems of their base (computed once: a schema of
    // 1,000 tables has thousands of distinct column names).
    const idColumnsByBase = new Map<string, string[]>();
    for (const name of byColumn.keys()) {
      const words = splitWords(name);
      const last = words.at(-1);
      let base: string[] | undefined;
      if (last === 'id' && words.length >= 2) base = words.slice(0, -1);
      else if (words.length === 1 && last?.endsWith('id') && last.length > 4) base = [last.slice(0, -2)];
      if (!base) continue;
      const key = base.map(stem).join('');
      const list = idColumnsByBase.get(key) ?? [];
      list.push(name);
      idColumnsByBase.set(key, list);
    }
    for (const table of tables) {
      const singleKey = table.primaryKey.length === 1 ? table.primaryKey[0] : undefined;
      const target = singleKey ?? (table.columns.some((c) => c.name === 'id') ? 'id' : undefined);
      // (a) other tables carrying this table's single-column key under the same name.
      if (singleKey && singleKey !== 'id') {
        for (const other of byColumn.get(singleKey) ?? []) {
          if (other !== table)
            add({
              from: displayKey(other),
              to: displayKey(table),
              columns: [[singleKey, singleKey]],
              declared: false,
              strength: 0.9,
            });
        }
      }
      // (a') the key under a table-prefixed name: `tbordcustid` → `tbcustomer.tbcustid`.
      if (singleKey && singleKey.length >= 6 && /id$/i.test(singleKey)) {
        for (const [name, others] of byColumn) {
          if (name === singleKey || name.length <= 4) continue;
          let common = 0;
          while (common < name.length && name[common] === singleKey[common]) common += 1;
          const tail = singleKey.slice(common);
          if (common === 0 || tail.length < 4 || !name.endsWith(tail)) continue;
          for (const other of others) {
            if (other !== table)
              add({
                from: displayKey(other),
                to: displayKey(table),
                columns: [[name, singleKey]],
                declared: false,
                strength: 0.8,
              });
          }
        }
      }
      // (b) `<table>_id` / `<table>id` elsewhere, pointing at this table's key (or `id`).
      if (target) {
        const stemKey = splitWords(table.name).map(stem).join('');
        for (const name of idColumnsByBase.get(stemKey) ?? []) {
          if (name === target) continue;
          const others = byColumn.get(name) ?? [];
          for (const other of others) {
            if (other !== table)
              add({
                from: displayKey(other),
                to: displayKey(table),
                columns: [[name, target]],
                declared: false,
                strength: 0.9,
              });
          }
        }
      }
    }
    // (c) shared key-like column names held by few tables; the more tables, the weaker.
    for (const [name, holders] of byColumn) {
      if (holders.length < 2 || holders.length > MAX_SHARED_KEY_TABLES || !keyLike(name)) continue;
      const strength = Math.min(0.8, 1 / (1 + Math.log2(holders.length / 2 + 1)));
      for (let i = 0; i < holders.length; i += 1) {
        for (let j = i + 1; j < holders.length; j += 1) {
          add({
            from: displayKey(holders[i]!),
            to: displayKey(holders[j]!),
            columns: [[name, name]],
            declared: false,
            strength,
          });
        }
      }
    }
  }

  /**
   * Share of a table's columns that look like keys (`emp_no`, `project_id`): 1 for a pure junction
   * table such as `assignment(emp_no, project_id)`. Join paths only pass through junction-like tables or tables with
   * evidence of their own, so a path never runs through an unrelated table that happens to share
   * two column names.
   */
  junction(table: string): number {
    return this.junctionShare.get(table) ?? 0;
  }

  /**
   * Edges from `table` plus every table sharing one of its key-like columns, however many share it
   * (strength falls with the count): for ranking near a chosen table, not for paths.
   */
  neighbours(table: string): JoinEdge[] {
    const out = new Map<string, JoinEdge>(this.edges(table).map((e) => [e.to, e]));
    for (const column of this.columnsOf.get(table) ?? []) {
      const list = this.holders.get(column) ?? [];
      if (list.length < 2) continue;
      const strength = Math.min(0.8, 1 / (1 + Math.log2(list.length / 2 + 1)));
      for (const other of list) {
        if (other === table || out.has(other)) continue;
        out.set(other, { from: table, to: other, columns: [[column, column]], declared: false, strength });
      }
    }
    return [...out.values()];
  }

  /** Edges from `table`. */
  edges(table: string): readonly JoinEdge[] {
    return this.adjacency.get(table) ?? [];
  }

  /**
   * A shortest path (at most `maxHops` edges) from any table of `from` to `to`, as the list of
   * intermediate tables (empty when adjacent); `undefined` when none is that short. Among equally
   * short paths the one whose intermediates score highest in `preference` wins, then declared edges.
   * See {@link route} for the whole path.
   */
  path(
    from: ReadonlySet<string>,
    to: string,
    maxHops: number,
    preference: (table: string) => number = () => 0,
    allowed: (table: string) => boolean = () => true,
  ): string[] | undefined {
    const full = this.route(from, to, maxHops, preference, allowed);
    return full ? full.slice(1, -1) : undefined;
  }

  /**
   * The whole shortest path from a table of `from` to `to` (both ends included: `[start, …, to]`,
   * `[to]` when `to` is in `from`), or `undefined` when none has at most `maxHops` edges.
   * Intermediate tables must pass `allowed` unless they are reached over a declared foreign key
   * (a declared chain such as address → city → region → country is always walkable).
   */
  route(
    from: ReadonlySet<string>,
    to: string,
    maxHops: number,
    preference: (table: string) => number = () => 0,
    allowed: (table: string) => boolean = () => true,
  ): string[] | undefined {
    if (from.has(to)) return [to];
    // Breadth-first search from `to` back towards the set, keeping the best predecessor per layer.
    const best = new Map<string, { score: number; next: string | null; hops: number }>([
      [to, { score: 0, next: null, hops: 0 }],
    ]);
    let frontier = [to];
    for (let hops = 1; hops <= maxHops; hops += 1) {
      const nextFrontier = new Map<string, { score: number; next: string }>();
      for (const node of frontier) {
        const base = best.get(node)!.score;
        for (const edge of this.edges(node)) {
          if (best.has(edge.to)) continue;
          // Intermediates must be plausible: evidence, a junction table, or a declared key.
          if (!from.has(edge.to) && !edge.declared && !allowed(edge.to)) continue;
          const score = base + (node === to ? 0 : preference(node)) + 0.01 * edge.strength;
          const current = nextFrontier.get(edge.to);
          if (!current || current.score < score) nextFrontier.set(edge.to, { score, next: node });
        }
      }
      let reached: { node: string; score: number } | undefined;
      for (const [node, value] of nextFrontier) {
        best.set(node, { ...value, hops });
        if (from.has(node) && (!reached || reached.score < value.score))
          reached = { node, score: value.score };
      }
      if (reached) {
        const nodes: string[] = [reached.node];
        let cursor = best.get(reached.node)!.next;
        while (cursor) {
          nodes.push(cursor);
          cursor = best.get(cursor)!.next;
        }
        return nodes;
      }
      frontier = [...nextFrontier.keys()];
      if (frontier.length === 0) break;
    }
    return undefined;
  }

  /**
   * Tables reachable from `start` in at most `maxHops` edges of at least `minStrength`, with their
   * distance in edges (`start` itself excluded).
   */
  within(start: string, maxHops: number, minStrength: number): Map<string, number> {
    const distance = new Map<string, number>([[start, 0]]);
    let frontier = [start];
    for (let hops = 1; hops <= maxHops && frontier.length > 0; hops += 1) {
      const next: string[] = [];
      for (const node of frontier)
        for (const edge of this.edges(node)) {
          if (edge.strength < minStrength || distance.has(edge.to)) continue;
          distance.set(edge.to, hops);
          next.push(edge.to);
        }
      frontier = next;
    }
    distance.delete(start);
    return distance;
  }
}
