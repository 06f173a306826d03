// Prints the JSON Schema of signoff.json (src/signoff/jsonSchema.ts); `npm run schema` writes it
// to schema/kvqual-signoff.schema.json, and a unit test fails when that file is stale.
import { signoffJsonSchema } from '../src/signoff/jsonSchema';

process.stdout.write(`${JSON.stringify(signoffJsonSchema(), null, 2)}\n`);
