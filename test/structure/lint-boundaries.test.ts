// The lint's rules about the import graph (.dependency-cruiser.mjs, run by `npm run lint`): each case
// plants a few modules, laid out as this repository lays out its own, in a temporary directory,
// cruises them with the project's configuration as the lint does, and checks what is reported.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser'
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

interface Violation {
  rule: string
  from: string
  to: string
}

interface LintCase {
  /** What the lint does with the planted modules: the test's name. */
  name: string
  /** The modules, by their path in the repository, and their text. */
  files: Record<string, string>
  /** What the lint reports: each rule broken, from and to the module it names (none: it passes). */
  reports: Violation[]
}

const CASES: LintCase[] = [
  {
    name: 'fails on two modules that import each other (no-circular)',
    files: {
      'src/http/planted-reply.ts': "import { charge } from './planted-limit.js'\nexport const reply = () => charge()\n",
      'src/http/planted-limit.ts': "import { reply } from './planted-reply.js'\nexport const charge = () => typeof reply\n",
    },
    reports: [{ rule: 'no-circular', from: 'src/http/planted-limit.ts', to: 'src/http/planted-reply.ts' }],
  },
  {
    name: 'fails on a cycle of three modules closed by a type-only import (no-circular)',
    files: {
      'src/limits/planted-envelope.ts': "import type { Charger } from './planted-rate-limit.js'\nexport const body = (charge: Charger) => charge\n",
      'src/limits/planted-rate-limit.ts': "import { handle } from './planted-handler.js'\nexport type Charger = () => void\nexport const limit = handle\n",
      'src/limits/planted-handler.ts': "import { body } from './planted-envelope.js'\nexport const handle = () => body(() => {})\n",
    },
    reports: [{ rule: 'no-circular', from: 'src/limits/planted-envelope.ts', to: 'src/limits/planted-rate-limit.ts' }],
  },
  {
    name: 'passes modules that import one another in one direction only',
    files: {
      'src/limits/planted-allowance.ts': 'export const allowance = (max: number) => ({ max })\n',
      'src/limits/planted-take.ts': "import { allowance } from './planted-allowance.js'\nexport const take = () => allowance(10).max - 1\n",
      'src/http/planted-hook.ts':
        "import { allowance } from '../limits/planted-allowance.js'\nimport { take } from '../limits/planted-take.js'\nexport const refuse = () => [allowance(10), take()]\n",
    },
    reports: [],
  },
  {
    name: 'fails on a cycle of folders that no cycle of modules closes (layer-collections)',
    files: {
      'src/collections/planted-query.ts': 'export interface PlantedQuery { readonly limit: number }\n',
      'src/db/planted-list.ts':
        "import type { PlantedQuery } from '../collections/planted-query.js'\nexport const list = (query: PlantedQuery) => query.limit\n",
      'src/db/planted-rows.ts': 'export interface PlantedRows { readonly rows: unknown[] }\n',
      'src/collections/planted-page.ts': "import type { PlantedRows } from '../db/planted-rows.js'\nexport const itemsOf = (page: PlantedRows) => page.rows\n",
    },
    reports: [{ rule: 'layer-collections', from: 'src/collections/planted-page.ts', to: 'src/db/planted-rows.ts' }],
  },
  {
    name: 'fails on core, the bottom layer, naming a type of a higher one (layer-core)',
    files: {
      'src/graphql/planted-schema.ts': 'export type PlantedResolvers = Record<string, unknown>\n',
      'src/core/planted-shape.ts':
        "import type { PlantedResolvers } from '../graphql/planted-schema.js'\nexport type Shape = { resolvers: PlantedResolvers }\n",
    },
    reports: [{ rule: 'layer-core', from: 'src/core/planted-shape.ts', to: 'src/graphql/planted-schema.ts' }],
  },
  {
    name: 'fails on a shared layer that imports a feature, a folder the layers do not name (layer-graphql)',
    files: {
      'src/bookmarks/planted-service.ts': 'export const listBookmarks = () => []\n',
      'src/graphql/planted-resolvers.ts':
        "import { listBookmarks } from '../bookmarks/planted-service.js'\nexport const resolvers = { bookmarks: listBookmarks }\n",
    },
    reports: [{ rule: 'layer-graphql', from: 'src/graphql/planted-resolvers.ts', to: 'src/bookmarks/planted-service.ts' }],
  },
  {
    name: 'fails on an import of a file at the root of src/ that the layers do not place (layer-http)',
    files: {
      'src/planted-root.ts': 'export const ROOT = 1\n',
      'src/http/planted-reply.ts': "import { ROOT } from '../planted-root.js'\nexport const reply = () => ROOT\n",
    },
    reports: [{ rule: 'layer-http', from: 'src/http/planted-reply.ts', to: 'src/planted-root.ts' }],
  },
  {
    name: 'fails on a feature that imports one registered after it in src/features.ts, and passes the other way (feature-users)',
    files: {
      'src/posts/planted-posts.ts': "import { plantedUser } from '../users/planted-users.js'\nexport const plantedPost = () => plantedUser\n",
      'src/users/planted-users.ts': 'export const plantedUser = 1\n',
      'src/users/planted-profile.ts': "import { plantedPost } from '../posts/planted-posts.js'\nexport const profile = () => plantedPost()\n",
    },
    reports: [{ rule: 'feature-users', from: 'src/users/planted-profile.ts', to: 'src/posts/planted-posts.ts' }],
  },
  {
    name: 'passes imports down the layers: a feature of the shared layers and of what a feature is, the composition root of a feature',
    files: {
      'src/db/planted-db.ts': 'export type PlantedDb = object\n',
      'src/feature.ts': 'export interface Feature { readonly name: string }\n',
      'src/bookmarks/bookmarks.feature.ts':
        "import type { PlantedDb } from '../db/planted-db.js'\nimport type { Feature } from '../feature.js'\nexport const bookmarksFeature: Feature & { db?: PlantedDb } = { name: 'bookmarks' }\n",
      'src/features.ts': "import { bookmarksFeature } from './bookmarks/bookmarks.feature.js'\nexport const FEATURES = [bookmarksFeature]\n",
    },
    reports: [],
  },
]

let options: ICruiseOptions
let compilerConfig: Record<string, unknown>
let planted: string

beforeAll(async () => {
  options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.mjs'))
  planted = await mkdtemp(join(tmpdir(), 'threadline-lint-'))
  compilerConfig = JSON.parse(await readFile(join(ROOT, 'tsconfig.json'), 'utf8')) as Record<string, unknown>
})

afterAll(async () => {
  await rm(planted, { recursive: true, force: true })
})

/** Cruises `files`, planted in a directory of their own, as `npm run lint` cruises src/. */
async function lint(name: string, files: Record<string, string>): Promise<Violation[]> {
  const baseDir = join(planted, name)
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(baseDir, path)), { recursive: true })
    await writeFile(join(baseDir, path), text)
  }
  // The project's compiler options, over the planted tree.
  const tsConfigFile = join(baseDir, 'tsconfig.json')
  await writeFile(tsConfigFile, JSON.stringify({ ...compilerConfig, include: ['src'] }))
  const { output } = await cruise(
    ['src'],
    // Not cached: the cache is the project's, of its own tree.
    { ...options, baseDir, cache: false, tsConfig: { fileName: tsConfigFile } },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  )
  const result = output as ICruiseResult
  expect(result.summary.error + result.summary.warn + result.summary.info).toBe(result.summary.violations.length)
  return result.summary.violations.map((violation) => ({ rule: violation.rule.name, from: violation.from, to: violation.to }))
}

describe('the lint of the import graph', () => {
  for (const [index, { name, files, reports }] of CASES.entries()) {
    it(name, async () => {
      expect(await lint(`case-${index}`, files)).toEqual(reports)
    })
  }
})
