// The features, as the composition root registers them, for the tools that need the list: the
// lint's boundary rules (eslint.config.js) and the test projects (vitest.config.ts). Read from
// src/features.ts — the names in its FEATURES array, each imported from `./<name>/<name>.feature.js`
// — so that file stays the only list; and every folder of src/ that holds a feature module,
// registered or not (the lint refuses one that is not).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const FEATURE_IMPORT = /import \{ (\w+) \} from '\.\/([\w-]+)\/\2\.feature\.js'/g
const FEATURES_ARRAY = /export const FEATURES\b[^=]*= \[([^\]]*)\]/

/** The features in src/features.ts's FEATURES, in its order (the folder each is imported from). */
export function registeredFeatures(root = process.cwd()) {
  const source = readFileSync(join(root, 'src/features.ts'), 'utf8')
  const folderOf = new Map([...source.matchAll(FEATURE_IMPORT)].map(([, name, folder]) => [name, folder]))
  const listed = FEATURES_ARRAY.exec(source)?.[1] ?? ''
  return listed
    .split(',')
    .map((name) => folderOf.get(name.trim()))
    .filter((folder) => folder !== undefined)
}

/** Every folder of src/ with a `<folder>.feature.ts`. */
export function featureFolders(root = process.cwd()) {
  return readdirSync(join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, 'src', entry.name, `${entry.name}.feature.ts`)))
    .map((entry) => entry.name)
}

/** The folders of src/ that are neither a feature nor the composition (the CLI, the seed, the client): the shared layers. */
export function sharedLayers(root = process.cwd()) {
  const features = new Set(featureFolders(root))
  return readdirSync(join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !features.has(entry.name) && !COMPOSITION.includes(entry.name))
    .map((entry) => entry.name)
}

/** Folders that compose the features with everything else, like src/app.ts and src/features.ts: they may import any feature (.dependency-cruiser.mjs places each in the layers). */
export const COMPOSITION = ['cli', 'seed', 'client']
