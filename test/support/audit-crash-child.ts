/**
 * Child process of `test/audit.test.ts` (run with `node --import tsx`): records `argv[3]` audit
 * events in the journal folder `argv[2]` with no audit table attached, says so on stdout, then
 * kills itself with SIGKILL: nothing after the last record runs (no flush, no close).
 */
import { AuditLog } from '../../src/audit/log.js';

const dir = process.argv[2]!;
const count = Number(process.argv[3]);
const log = new AuditLog({ dir, retentionDays: 90 });
const listener = log.listener({ user: 'crash-user', frontEnd: 'cli', question: 'how many orders?' });
for (let i = 0; i < count; i++)
  listener({ sql: `SELECT ${i} AS n`, origin: 'person', outcome: 'ran', rowCount: i });
process.stdout.write(`${JSON.stringify(log.status())}\n`, () => process.kill(process.pid, 'SIGKILL'));
