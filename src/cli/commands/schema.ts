/**
 * `sqlrecall schema [--json]`: the catalog, as the model sees it (or every detail as JSON).
 */

import { renderSchema } from '../../sql/render.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { withRuntime } from '../with-runtime.js';

/** Runs `schema`. */
export async function runSchema(io: CliIO, opts: GlobalOptions): Promise<number> {
  const json = Boolean(opts.json);
  return withRuntime(io, opts, async (runtime, config) => {
    const db = await runtime.database();
    const schema = await db.introspect({ schemas: config.schemas.length ? config.schemas : undefined });
    if (json) {
      printJson(io, schema);
    } else {
      io.stdout.write(`${renderSchema(schema)}\n`);
      io.stderr.write(
        pc.dim(
          `${schema.tables.length} relations in ${schema.schemas.join(', ') || 'no schema'} (${db.displayName})\n`,
        ),
      );
    }
    return 0;
  });
}
