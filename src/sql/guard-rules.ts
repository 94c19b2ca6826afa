/**
 * The read-only policy of the SQL guard, as data (DESIGN.md "SQL safety, in depth", step 2).
 * `guard.ts` walks the whole parse tree of libpg-query and applies every rule below to every node;
 * the first match refuses the statement with the rule's `reason`. Extend the lists here, not the
 * walker. Sources: PostgreSQL 15–18 "System Administration Functions", "Sequence Manipulation
 * Functions", "Large Objects", "XML Functions", "pg_authid"; checked against `pg_proc` of PG 15.
 */

/** A rule of the read-only policy. `{name}` in `reason` is replaced by the matched name. */
export type GuardRule =
  /** Refuse when a node of one of these parse-tree types occurs anywhere (e.g. in a CTE). */
  | { id: string; match: { nodes: readonly string[] }; reason: string }
  /** Refuse when a node carries this (non-empty) field, e.g. `intoClause` of SELECT INTO. */
  | { id: string; match: { field: string }; reason: string }
  /**
   * Refuse calls of these functions, matched case-insensitively on the last part of the name
   * (schema-qualified and quoted names included); a trailing `*` matches a prefix.
   */
  | { id: string; match: { functions: readonly string[] }; reason: string }
  /** Refuse reading these relations (case-insensitive, any schema). */
  | { id: string; match: { relations: readonly string[] }; reason: string };

/** Statement kinds a read may be: the first word of the accepted statement. */
export type ReadKind = 'select' | 'values' | 'table' | 'with' | 'explain';

/** Top-level parse-tree types that may be a read (everything else is refused: fail closed). */
export const READ_STATEMENT_TYPES: readonly string[] = ['SelectStmt', 'ExplainStmt'];

/** EXPLAIN options that execute the statement (EXPLAIN ANALYZE runs it, writes included). */
export const EXECUTING_EXPLAIN_OPTIONS: readonly string[] = ['analyze', 'analyse'];

/** Readable names of refused top-level statements; other types are named from their node type. */
export const STATEMENT_LABELS: Readonly<Record<string, string>> = {
  CreateTableAsStmt: 'CREATE TABLE AS',
  TransactionStmt: 'transaction control (BEGIN, COMMIT, ROLLBACK…)',
  VariableSetStmt: 'SET',
  VariableShowStmt: 'SHOW',
  CopyStmt: 'COPY',
  DoStmt: 'DO',
  CallStmt: 'CALL',
  ExecuteStmt: 'EXECUTE',
  DeclareCursorStmt: 'DECLARE',
  RawStmt: 'this statement',
};

/** The deny rules applied to every node of the tree, in order. */
export const GUARD_RULES: readonly GuardRule[] = [
  {
    id: 'data-modifying',
    match: { nodes: ['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt'] },
    reason:
      'refused: the statement contains a data-modifying part ({name}), for example inside a WITH clause',
  },
  {
    id: 'select-into',
    match: { field: 'intoClause' },
    reason: 'refused: SELECT INTO creates a new table; only reads are allowed',
  },
  {
    id: 'locking-clause',
    match: { field: 'lockingClause' },
    reason: 'refused: FOR UPDATE / FOR SHARE locks rows, which a read-only question never needs',
  },
  {
    id: 'sleep',
    match: { functions: ['pg_sleep*'] },
    reason: 'refused: {name} can stall the database',
  },
  {
    id: 'advisory-lock',
    match: { functions: ['pg_advisory*', 'pg_try_advisory*'] },
    reason: 'refused: {name} takes or releases advisory locks',
  },
  {
    id: 'settings',
    match: { functions: ['set_config', 'pg_reload_conf', 'pg_rotate_logfile*', 'pg_switch_wal'] },
    reason: 'refused: {name} changes server settings or files',
  },
  {
    id: 'sequences',
    match: { functions: ['nextval', 'setval'] },
    reason: 'refused: {name} changes a sequence',
  },
  {
    id: 'transaction-id',
    match: { functions: ['txid_current', 'pg_current_xact_id'] },
    reason: 'refused: {name} assigns a transaction id, which is a write',
  },
  {
    id: 'large-objects',
    match: { functions: ['lo_*'] },
    reason: 'refused: {name} reads or writes large objects and server files',
  },
  {
    id: 'server-files',
    match: { functions: ['pg_read_file*', 'pg_read_binary_file', 'pg_ls_*', 'pg_stat_file'] },
    reason: 'refused: {name} reads files on the database server',
  },
  {
    id: 'remote',
    match: { functions: ['dblink*'] },
    reason: 'refused: {name} connects to another database',
  },
  {
    id: 'signals',
    match: { functions: ['pg_notify', 'pg_cancel_backend', 'pg_terminate_backend', 'pg_stat_reset*'] },
    reason: 'refused: {name} affects other sessions or server statistics',
  },
  {
    id: 'nested-query',
    match: {
      functions: ['query_to_xml*', 'table_to_xml*', 'cursor_to_xml*', 'database_to_xml*', 'schema_to_xml*'],
    },
    reason: 'refused: {name} runs SQL given as text, which the guard cannot check',
  },
  {
    id: 'administration',
    match: {
      functions: [
        'pg_logical_emit_message',
        'pg_create_*',
        'pg_drop_replication_slot',
        'pg_replication_origin_*',
        'pg_promote',
        'pg_backup_*',
        'pg_wal_replay_*',
        'pg_import_system_collations',
        'pg_log_backend_memory_contexts',
        'loread',
        'lowrite',
      ],
    },
    reason: 'refused: {name} is a server administration function',
  },
  {
    id: 'secret-catalogs',
    match: { relations: ['pg_authid', 'pg_shadow', 'pg_user_mappings'] },
    reason: 'refused: {name} holds passwords or credentials',
  },
];
