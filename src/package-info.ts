// This package's own package.json, found from wherever the running module is: src/ (tsx, vitest),
// dist/ as tsc compiles it, or a chunk of the bundled command (dist/cli-chunks/). Each lies at
// another depth below the package's folder, so the file is looked for upwards, once, at load.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findPackageJson(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json')
    if (existsSync(candidate)) return candidate
    if (dirname(dir) === dir) throw new Error(`No package.json above ${from}`)
  }
}

/** The package's version, as package.json gives it. */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(findPackageJson(dirname(fileURLToPath(import.meta.url))), 'utf8')) as { version: string }).version
