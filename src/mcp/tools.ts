/**
 * The MCP tool names, in a module of their own so `mcp --help` can list them without loading the
 * MCP server and its SDK.
 */

/** Names of the tools, in the order they are listed. */
export const MCP_TOOLS = [
  'ask',
  'sql',
  'schema',
  'schema_context',
  'remember',
  'recall',
  'forget',
  'show_memory',
  'audit_memory',
] as const;
