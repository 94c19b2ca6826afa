/**
 * `sqlrecall audit [--user NAME] [--since WHEN] [--limit N] [--json]`: the statements run or
 * refused per user, newest first, from the audit table in the memory store's database. Records
 * still in the journals of finished processes are moved there first, and records past the
 * retention are deleted.
 */
import { auditText, parseSince } from '../../app/audit.js';
import { AuditStore, MAX_AUDIT_LIST } from '../../audit/store.js';
import { SqlrecallError } from '../../core/errors.js';
import { memoryClient } from '../../runtime/memory-runtime.js';
import { auditLogFor } from '../../runtime/runtime.js';
import { configFrom } from '../config-from.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { reportError } from '../report.js';

/** Runs `audit`. */
export async function runAudit(
  io: CliIO,
  opts: GlobalOptions & { since?: string; limit?: string },
): Promise<number> {
  const json = Boolean(opts.json);
  let client: ReturnType<typeof memoryClient> | undefined;
  try {
    const since = opts.since !== undefined ? parseSince(opts.since) : undefined;
    const limit = opts.limit !== undefined ? Number(opts.limit) : 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIST)
      throw new SqlrecallError('usage', `--limit is a whole number from 1 to ${MAX_AUDIT_LIST}.`);
    const config = configFrom(io, opts);
    client = memoryClient(config);
    const store = new AuditStore(client);
    const log = auditLogFor(config);
    await log.attach(store);
    await log.close();
    const status = log.status();
    if (status.errors > 0)
      throw new SqlrecallError('memory_store', `The audit table could not be read: ${status.lastError}`);
    const records = await store.list({
      ...(opts.user !== undefined ? { user: opts.user } : {}),
      ...(since ? { since } : {}),
      limit,
    });
    if (json) printJson(io, { records });
    else io.stdout.write(auditText(records));
    return 0;
  } catch (error) {
    return reportError(io, json, error);
  } finally {
    await client?.close().catch(() => undefined);
  }
}
