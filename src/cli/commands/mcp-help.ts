/** `sqlrecall mcp --help` text, in its own module so the CLI can show it without loading the MCP server. */
import { MCP_TOOLS } from '../../mcp/tools.js';

/** Help text after the options: what it serves, and how to add it to a client. */
export const MCP_HELP = `
Serves the Model Context Protocol on stdin/stdout for ONE user (--user or SQLRECALL_USER; a user
named in a tool's arguments is refused). Clients start it themselves; you rarely run it by hand.

Tools:      ${MCP_TOOLS.join(', ')}
Resources:  schema://tables (every table), schema://tables/{schema.table} (one table)
Bounds:     rows capped by --max-rows (SQLRECALL_MAX_ROWS), each result's text by --max-bytes
Errors:     tool results with isError and {"error":{"code","message"}}, codes as in --json output
Logs:       stderr only (stdout is the protocol)

Add it to an MCP client (e.g. a desktop assistant's or editor's mcpServers setting):
  {
    "mcpServers": {
      "sqlrecall": {
        "command": "npx",
        "args": ["-y", "sqlrecall", "mcp", "--user", "priya"],
        "env": { "DATABASE_URL": "postgres://me@localhost/shop", "OLLAMA_HOST": "http://127.0.0.1:11434" }
      }
    }
  }

Examples:
  $ sqlrecall mcp --user priya --db postgres://me@localhost/shop
  $ sqlrecall mcp --db pglite:~/.sqlrecall/demo-shop --max-rows 200 --max-bytes 32768`;
