// src/seed/seed-flags.ts, written from the features' seed sections (npm run generate): the
// `threadline seed` command shows and parses a flag per section without loading the features, whose
// modules take seconds to load for a --help. test/seed/seed-database.test.ts fails when the file
// and the sections differ.
import { writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { FEATURES } from '../src/features.js'

export const SEED_FLAGS_PATH = fileURLToPath(new URL('../src/seed/seed-flags.ts', import.meta.url))

/** A string as TypeScript source, in the lint's single quotes. */
const quoted = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

export function renderSeedFlags(): string {
  const flags = FEATURES.flatMap(({ name, seed }) =>
    seed === undefined ? [] : [`  { name: ${quoted(name)}, demo: ${seed.demo}, help: ${quoted(seed.help)} },`],
  )
  return [
    "// Written by `npm run generate` from the features' seed sections (src/<feature>/<feature>.seed.ts),",
    '// in the order they are seeded: the flags of `threadline seed`, known without loading the features.',
    '// test/seed/seed-database.test.ts fails when this file and the sections differ.',
    '',
    '/** Each feature that generates rows: its name (the flag `--<name> <n>`), its rows in the demo data, the flag in words. */',
    'export const SEED_FLAGS = [',
    ...flags,
    '] as const',
    '',
    '/** The features that generate rows. */',
    "export type SeededFeature = (typeof SEED_FLAGS)[number]['name']",
    '',
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(SEED_FLAGS_PATH, renderSeedFlags())
}
