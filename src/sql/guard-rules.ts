/**
 * The read-only policy of the SQL guard, as data.
 * `guard.ts` walks the whole parse tree of libpg-query (subqueries, CTEs, set operations, LATERAL,
 * function arguments) and applies every rule below to every node; the first match refuses the
 * statement with the rule's `reason`, which is shown to the user as-is. Extend the lists here, not
 * the walker. Sources: PostgreSQL 15–18 "SQL Commands" (statement kinds), "System Administration
 * Functions", "Sequence Manipulation Functions", "Large Objects", "XML Functions", "Text Search
 * Functions", the dblink and tablefunc modules, "pg_authid"/"pg_user_mapping"; checked against
 * `pg_proc` of PostgreSQL 15 and libpg-query 18's node types.
 */

/** A rule of the read-only policy. `{name}` in `reason` is replaced by the matched name. */
export type GuardRule =
  /**
   * Refuse when a node of one of these parse-tree types occurs anywhere: as the statement itself,
   * inside EXPLAIN or inside a WITH clause. A `*` in a pattern matches any characters.
   */
  | { id: string; match: { nodes: readonly string[] }; reason: string }
  /** Refuse when a node carries this (non-empty) field, e.g. `intoClause` of SELECT INTO. */
  | { id: string; match: { field: string }; reason: string }
  /** Refuse an EXPLAIN carrying one of these options (case-insensitive, whatever its value). */
  | { id: string; match: { explainOptions: readonly string[] }; reason: string }
  /**
   * Refuse calls of these functions, matched case-insensitively on the last part of the name
   * (schema-qualified and quoted names included); a trailing `*` matches a prefix.
   */
  | { id: string; match: { functions: readonly string[] }; reason: string }
  /** Refuse reading these relations (case-insensitive, any schema; a trailing `*` matches a prefix). */
  | { id: string; match: { relations: readonly string[] }; reason: string };

/** Statement kinds a read may be: the first word of the accepted statement. */
export type ReadKind = 'select' | 'values' | 'table' | 'with' | 'explain';

/** Top-level parse-tree types that may be a read (everything else is refused: fail closed). */
export const READ_STATEMENT_TYPES: readonly string[] = ['SelectStmt', 'ExplainStmt'];

/** Readable names of statement node types; others are named from their node type. */
export const STATEMENT_LABELS: Readonly<Record<string, string>> = {
  CreateTableAsStmt: 'CREATE TABLE AS',
  TransactionStmt: 'transaction control (BEGIN, COMMIT, ROLLBACK…)',
  VariableSetStmt: 'SET / RESET',
  VariableShowStmt: 'SHOW',
  CopyStmt: 'COPY',
  DoStmt: 'DO',
  CallStmt: 'CALL',
  ExecuteStmt: 'EXECUTE',
  PrepareStmt: 'PREPARE',
  DeallocateStmt: 'DEALLOCATE',
  DeclareCursorStmt: 'DECLARE',
  FetchStmt: 'FETCH',
  ClosePortalStmt: 'CLOSE',
  VacuumStmt: 'VACUUM / ANALYZE',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  CheckPointStmt: 'CHECKPOINT',
  ConstraintsSetStmt: 'SET CONSTRAINTS',
  AlterSystemStmt: 'ALTER SYSTEM',
  GrantStmt: 'GRANT / REVOKE',
  GrantRoleStmt: 'GRANT / REVOKE role',
  CreatedbStmt: 'CREATE DATABASE',
  DropdbStmt: 'DROP DATABASE',
  IndexStmt: 'CREATE INDEX',
  ViewStmt: 'CREATE VIEW',
  RuleStmt: 'CREATE RULE',
  DefineStmt: 'CREATE (aggregate, operator or type)',
  CompositeTypeStmt: 'CREATE TYPE',
  CreateStmt: 'CREATE TABLE',
  CreateTrigStmt: 'CREATE TRIGGER',
  CreateFunctionStmt: 'CREATE FUNCTION',
  RenameStmt: 'ALTER … RENAME',
  SecLabelStmt: 'SECURITY LABEL',
  RawStmt: 'this statement',
};

/** The deny rules applied to every node of the tree, in order (the first match is reported). */
export const GUARD_RULES: readonly GuardRule[] = [
  // --- statement kinds and clauses -------------------------------------------------------------
  {
    id: 'data-modifying',
    match: { nodes: ['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'TruncateStmt'] },
    reason: 'refused: a statement that modifies data ({name}); only reads are allowed',
  },
  {
    id: 'merge',
    match: { nodes: ['MergeStmt'] },
    reason: 'refused: MERGE inserts, updates or deletes rows',
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
    id: 'explain-analyze',
    match: { explainOptions: ['analyze', 'analyse'] },
    reason: 'refused: EXPLAIN ANALYZE executes the statement; use plain EXPLAIN',
  },
  {
    id: 'transaction-control',
    match: { nodes: ['TransactionStmt', 'ConstraintsSetStmt'] },
    reason: 'refused: {name} is not allowed; every query runs in its own read-only transaction',
  },
  {
    id: 'session-settings',
    match: { nodes: ['VariableSetStmt', 'DiscardStmt', 'AlterSystemStmt'] },
    reason: 'refused: {name} changes session or server settings',
  },
  {
    id: 'copy',
    match: { nodes: ['CopyStmt'] },
    reason: 'refused: COPY reads or writes files and programs on the server; use SELECT',
  },
  {
    id: 'procedural',
    match: { nodes: ['DoStmt', 'CallStmt'] },
    reason: 'refused: {name} runs procedural code the guard cannot check',
  },
  {
    id: 'prepared-statements',
    match: { nodes: ['PrepareStmt', 'ExecuteStmt', 'DeallocateStmt'] },
    reason: 'refused: {name} runs or stores statements the guard cannot see',
  },
  {
    id: 'cursors',
    match: { nodes: ['DeclareCursorStmt', 'FetchStmt', 'ClosePortalStmt'] },
    reason: 'refused: {name} manages cursors; sqlrecall opens its own',
  },
  {
    id: 'listen-notify',
    match: { nodes: ['ListenStmt', 'NotifyStmt', 'UnlistenStmt'] },
    reason: 'refused: {name} signals other sessions',
  },
  {
    id: 'lock',
    match: { nodes: ['LockStmt'] },
    reason: 'refused: LOCK takes table locks that can block other sessions',
  },
  {
    id: 'maintenance',
    match: {
      nodes: ['VacuumStmt', 'RefreshMatViewStmt', 'ClusterStmt', 'ReindexStmt', 'CheckPointStmt', 'LoadStmt'],
    },
    reason: 'refused: {name} is a maintenance command that changes the database or the server',
  },
  {
    id: 'dcl',
    match: {
      nodes: [
        'GrantStmt',
        'GrantRoleStmt',
        '*RoleStmt',
        'AlterRoleSetStmt',
        'AlterDefaultPrivilegesStmt',
        'ReassignOwnedStmt',
        'DropOwnedStmt',
        '*UserMappingStmt',
        '*PolicyStmt',
        'SecLabelStmt',
      ],
    },
    reason: 'refused: {name} changes roles or privileges',
  },
  {
    id: 'ddl',
    match: {
      nodes: [
        'Create*Stmt',
        'Alter*Stmt',
        'Drop*Stmt',
        'CreatedbStmt',
        'DropdbStmt',
        'DefineStmt',
        'IndexStmt',
        'ViewStmt',
        'RuleStmt',
        'RenameStmt',
        'CommentStmt',
        'CompositeTypeStmt',
        'ImportForeignSchemaStmt',
        'ReplicaIdentityStmt',
      ],
    },
    reason: "refused: {name} is DDL; it changes the database's structure",
  },
  // --- functions with side effects or outside access ------------------------------------------
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
    match: {
      functions: ['set_config', 'pg_reload_conf', 'pg_rotate_logfile*', 'pg_switch_wal', 'pg_switch_xlog'],
    },
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
    match: { functions: ['lo_*', 'loread', 'lowrite'] },
    reason: 'refused: {name} reads or writes large objects and server files',
  },
  {
    id: 'server-files',
    match: {
      functions: [
        'pg_read_file*',
        'pg_read_binary_file*',
        'pg_ls_*',
        'pg_stat_file',
        'pg_file_*',
        'pg_logdir_ls',
      ],
    },
    reason: 'refused: {name} reads or writes files on the database server',
  },
  {
    id: 'remote',
    match: { functions: ['dblink*'] },
    reason: 'refused: {name} connects to another database',
  },
  {
    id: 'signals',
    match: {
      functions: [
        'pg_notify',
        'pg_cancel_backend',
        'pg_terminate_backend',
        'pg_signal_backend',
        'pg_stat_reset*',
        'pg_stat_statements_reset',
        'pg_log_backend_memory_contexts',
      ],
    },
    reason: 'refused: {name} affects other sessions or server statistics',
  },
  {
    id: 'nested-query',
    match: {
      functions: [
        'query_to_xml*',
        'table_to_xml*',
        'cursor_to_xml*',
        'database_to_xml*',
        'schema_to_xml*',
        'ts_stat',
        'ts_rewrite',
        'crosstab*',
        'connectby',
      ],
    },
    reason: 'refused: {name} runs SQL given as text, which the guard cannot check',
  },
  {
    id: 'administration',
    match: {
      functions: [
        'pg_logical_emit_message',
        'pg_logical_slot_*',
        'pg_create_*',
        'pg_copy_*_replication_slot',
        'pg_drop_replication_slot',
        'pg_replication_slot_advance',
        'pg_replication_origin_*',
        'pg_promote',
        'pg_backup_*',
        'pg_start_backup',
        'pg_stop_backup',
        'pg_wal_replay_*',
        'pg_import_system_collations',
      ],
    },
    reason: 'refused: {name} is a server administration function',
  },
  // --- credential catalogs ----------------------------------------------------------------------
  {
    id: 'secret-catalogs',
    // information_schema shows user mappings' options (a foreign server's user and password)
    // through views of its own, so their names are refused beside the catalogs they read.
    match: {
      relations: [
        'pg_authid',
        'pg_shadow',
        'pg_user_mappings',
        'pg_user_mapping',
        'user_mapping_options',
        '_pg_user_mappings',
      ],
    },
    reason: 'refused: {name} holds passwords or credentials',
  },
  // Every other catalog that can hold a credential or the server's
  // authentication set-up. pg_subscription.subconninfo holds the publisher's connection string
  // (password included); pg_foreign_server.srvoptions may hold one for some wrappers;
  // pg_file_settings and pg_settings show settings such as primary_conninfo (a password on a
  // standby) to privileged roles; pg_hba_file_rules and pg_ident_file_mappings expose who may log
  // in from where; pg_db_role_setting holds per-role settings; pg_stat_subscription is kept
  // readable (no connection string). The set-returning functions behind these views are refused
  // by 'settings-secrets'. Not covered: current_setting('primary_conninfo') on a standby (refusing
  // current_setting would refuse every harmless setting read); run sqlrecall as a role without
  // pg_read_all_settings, which PostgreSQL then refuses itself.
  {
    id: 'credential-catalogs',
    match: {
      relations: [
        'pg_subscription',
        'pg_foreign_server',
        // information_schema's views of the same server options (host, port, database, at times a password).
        'foreign_server_options',
        '_pg_foreign_servers',
        'pg_file_settings',
        'pg_settings',
        'pg_hba_file_rules',
        'pg_ident_file_mappings',
        'pg_db_role_setting',
      ],
    },
    reason: 'refused: {name} holds passwords, connection strings or authentication settings',
  },
  {
    id: 'settings-secrets',
    match: {
      functions: [
        'pg_show_all_settings',
        'pg_show_all_file_settings',
        'pg_hba_file_rules',
        'pg_ident_file_mappings',
      ],
    },
    reason: 'refused: {name} shows server settings that can hold connection strings and passwords',
  },
];

/** True when `name` matches one of `patterns` case-insensitively (`*` matches any characters). */
export function matchesPattern(name: string, patterns: readonly string[]): boolean {
  const lower = name.toLowerCase();
  return patterns.some((pattern) => {
    const p = pattern.toLowerCase();
    if (!p.includes('*')) return lower === p;
    const parts = p.split('*');
    let at = 0;
    for (const [index, part] of parts.entries()) {
      if (index === 0) {
        if (!lower.startsWith(part)) return false;
        at = part.length;
      } else if (index === parts.length - 1) {
        return lower.length - part.length >= at && lower.endsWith(part);
      } else {
        const found = lower.indexOf(part, at);
        if (found < 0) return false;
        at = found + part.length;
      }
    }
    return true;
  });
}
