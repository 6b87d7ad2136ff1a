// The client's committed types are what openapi-typescript makes of the document the server serves
// now: a route or schema change without `npm run client:types` fails here.
import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { CLIENT_TYPES_FILE, generateClientTypes } from '../../scripts/generate-client-types.js'

it('has committed client types that match the OpenAPI document the server serves', async () => {
  const committed = await readFile(CLIENT_TYPES_FILE, 'utf8')
  const generated = await generateClientTypes()
  // Compared as a whole; on failure, run `npm run client:types` and commit src/client/openapi.ts.
  expect(committed === generated, 'src/client/openapi.ts is stale: run `npm run client:types`').toBe(true)
})
