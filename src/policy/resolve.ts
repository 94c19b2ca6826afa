/**
 * One user's {@link EffectivePolicy} from a policy document: which entries apply, and how their
 * rules merge.
 *
 * Which entries apply:
 * - a user with an entry in the file: that entry, plus every team it lists; when it lists none,
 *   `defaults` stand in for the teams (an entry that only sets attributes restricts no less than
 *   no entry at all);
 * - a user without an entry whose registered team (the users table, or `--team`) is a team of the
 *   file: that team;
 * - anyone else: `defaults`.
 * The file wins over the registered team: a user with an entry gets the teams the entry lists.
 *
 * How rules merge, failing closed: allow-lists intersect, denied columns add up, row filters on one
 * table are AND-ed; `rows_to_model` is the user's own value, else false when any applying team
 * says false (true when they all say true), else the defaults', else true.
 *
 * A row filter naming an attribute the user lacks makes that table unreadable for the user: the
 * filter becomes `false` (no row passes, whatever enforces it) and its `policy` says which
 * attribute is missing; {@link unreadableTables} lists such tables so enforcement can refuse
 * statements on them with that reason.
 */
import { userNameKey } from '../app/user-names.js';
import type { CompiledRowFilter, PolicyDocument, PolicyRules } from './file.js';
import { USER_ATTRIBUTE } from './file.js';
import type { EffectivePolicy, RowFilter } from './types.js';

/** The expression of a filter whose attribute the user lacks: no row passes. */
export const UNREADABLE_FILTER = 'false';

/** What the caller knows of the user besides the name. */
export interface PolicyUserContext {
  /** The user's registered team (users table, or `--team`); used when the file has no entry. */
  team?: string;
  /** The user administers sqlrecall (reads the audit and policy status over HTTP). */
  admin?: boolean;
}

/**
 * The merged policy of `user` under `document` (see the module comment for the rules).
 * Pure; never throws.
 */
export function effectivePolicy(
  document: PolicyDocument,
  user: string,
  context: PolicyUserContext = {},
): EffectivePolicy {
  const entry = document.users.get(userNameKey(user));
  const layers: { source: string; rules: PolicyRules }[] = [];
  let teams: readonly string[];
  if (entry) {
    layers.push({ source: `user ${entry.name}`, rules: entry.rules });
    teams = entry.teams;
  } else {
    teams = context.team !== undefined && document.teams.has(context.team) ? [context.team] : [];
  }
  for (const team of teams) {
    const rules = document.teams.get(team);
    if (rules) layers.push({ source: `team ${team}`, rules });
  }
  if (teams.length === 0) layers.push({ source: 'defaults', rules: document.defaults });

  const attributes: Record<string, string> = { ...(entry?.attributes ?? {}), [USER_ATTRIBUTE]: user };
  let tables: Set<string> | undefined;
  const denied = new Map<string, Map<string, string>>();
  const filters = new Map<string, RowFilter[]>();
  for (const { source, rules } of layers) {
    if (rules.tables) {
      const allowed = new Set(rules.tables);
      tables = tables ? new Set([...tables].filter((t) => allowed.has(t))) : allowed;
    }
    for (const [table, columns] of rules.denyColumns) {
      const map = denied.get(table) ?? new Map<string, string>();
      for (const column of columns) if (!map.has(column)) map.set(column, source);
      denied.set(table, map);
    }
    for (const [table, filter] of rules.rows) {
      const list = filters.get(table) ?? [];
      list.push(bindFilter(filter, attributes, source, user));
      filters.set(table, list);
    }
  }

  const sources = layers.map((l) => l.source);
  let rowsToModel = entry?.rules.rowsToModel;
  if (rowsToModel === undefined) {
    const said = teams.flatMap((t) => {
      const value = document.teams.get(t)?.rowsToModel;
      return value === undefined ? [] : [value];
    });
    if (said.length > 0) rowsToModel = said.every(Boolean);
  }
  if (rowsToModel === undefined && document.defaults.rowsToModel !== undefined) {
    rowsToModel = document.defaults.rowsToModel;
    if (!sources.includes('defaults')) sources.push('defaults');
  }
  return {
    user,
    sources,
    ...(tables ? { tables } : {}),
    deniedColumns: denied,
    rowFilters: filters,
    rowsToModel: rowsToModel ?? true,
    admin: context.admin ?? false,
  };
}

/** A compiled filter with the user's attribute values bound; `false` when one is missing. */
function bindFilter(
  filter: CompiledRowFilter,
  attributes: Readonly<Record<string, string>>,
  source: string,
  user: string,
): RowFilter {
  const missing = filter.attributes.filter((a) => attributes[a] === undefined);
  if (missing.length > 0)
    return {
      expression: UNREADABLE_FILTER,
      params: [],
      policy: `${source} (attribute ${missing.join(', ')} not set for user ${user})`,
    };
  return {
    expression: filter.expression,
    params: filter.attributes.map((a) => attributes[a]!),
    policy: source,
  };
}

/**
 * The tables `policy` makes unreadable because a row filter names an attribute the user lacks,
 * each with the reason (the filter's `policy` text), for refusals and `policy explain`.
 */
export function unreadableTables(policy: EffectivePolicy): Map<string, string> {
  const out = new Map<string, string>();
  for (const [table, list] of policy.rowFilters) {
    const dead = list.find((f) => f.expression === UNREADABLE_FILTER && f.params.length === 0);
    if (dead) out.set(table, dead.policy);
  }
  return out;
}
