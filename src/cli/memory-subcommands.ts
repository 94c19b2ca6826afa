/**
 * The subcommands of `sqlrecall memory`, declared once: the command runs them and the help lists
 * them (kept apart from the command's module, which the help must not load).
 */
export const MEMORY_SUBCOMMANDS = [
  'list',
  'add',
  'search',
  'edit',
  'delete',
  'restore',
  'history',
  'show',
  'export',
  'import',
  'off',
  'on',
  'reembed',
  'pin',
  'unpin',
  'audit',
  'forget',
] as const;
