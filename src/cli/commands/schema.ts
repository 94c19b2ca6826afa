/**
 * `sqlrecall schema [--json]`: the catalog, as the model sees it (or every detail as JSON).
 */

import { readSchema, schemaText } from '../../app/schema.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { withRuntime } from '../with-runtime.js';

/** Runs `schema`. */
export async function runSchema(io: CliIO, opts: GlobalOptions): Promise<number> {
  const json = Boolean(opts.json);
  return withRuntime(io, opts, async (runtime, config) => {
    // The user sees the tables and columns their data policy lets them read, nothing else.
    const policy = await runtime.policyFor(
      config.user,
      config.team !== undefined ? { team: config.team } : {},
    );
    const schema = await readSchema(runtime, { policy });
    if (json) {
      printJson(io, schema);
    } else {
      io.stdout.write(`${schemaText(schema)}\n`);
      const { displayName } = await runtime.database();
      io.stderr.write(
        pc.dim(
          `${schema.tables.length} relations in ${schema.schemas.join(', ') || 'no schema'} (${displayName})\n`,
        ),
      );
    }
    return 0;
  });
}
