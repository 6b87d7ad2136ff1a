// The files of other packages that the service's pages load (GraphiQL, React, Swagger UI), and the
// one rule for finding them. The build (`npm run build`: scripts/copy-page-assets.ts) copies them
// to dist/assets/<package>/<file>, so an installed Threadline ships them prebuilt and those
// packages are development dependencies only: installing the package pulls no React. Run from
// src/ (tsx, vitest) there is no such folder next to the module, and the files are found in
// node_modules, as in any development checkout.
import { constants } from 'node:fs'
import { access } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Every file a page loads from another package: a file missing here is missing from the package. */
export const PACKAGED_ASSETS = [
  { packageName: 'graphiql', file: 'graphiql.min.css' },
  { packageName: 'graphiql', file: 'graphiql.min.js' },
  { packageName: 'react', file: 'umd/react.production.min.js' },
  { packageName: 'react-dom', file: 'umd/react-dom.production.min.js' },
  { packageName: 'swagger-ui-dist', file: 'swagger-ui.css' },
  { packageName: 'swagger-ui-dist', file: 'swagger-ui-bundle.js' },
  { packageName: 'swagger-ui-dist', file: 'favicon-32x32.png' },
] as const

export type PackagedAsset = (typeof PACKAGED_ASSETS)[number]

/** The folder, beside the compiled src/ (dist/), that the build fills with the copies. */
export const PACKAGED_ASSETS_FOLDER = 'assets'

/** Where a copy lives under the packaged assets folder. */
export const packagedAssetPath = (asset: PackagedAsset): string => join(asset.packageName, asset.file)

const require = createRequire(import.meta.url)

/** The file in the package's own node_modules (development; also the source the build copies from). */
export const installedAssetPath = (asset: PackagedAsset): string => join(dirname(require.resolve(`${asset.packageName}/package.json`)), asset.file)

/**
 * The copy one folder up from this module when it runs from dist/ (an installed package): from
 * dist/pages/ as tsc compiles it, or from dist/cli-chunks/ in the bundled command. Else the
 * installed package's file.
 */
export async function findPackagedAsset(asset: PackagedAsset): Promise<string> {
  const folder = join(dirname(fileURLToPath(import.meta.url)), '..', PACKAGED_ASSETS_FOLDER)
  const packaged = join(folder, packagedAssetPath(asset))
  if (await exists(packaged)) return packaged
  try {
    return installedAssetPath(asset)
  } catch {
    throw new Error(`${asset.packageName}/${asset.file}: neither in ${folder} (npm run build copies it there) nor in an installed ${asset.packageName}`)
  }
}

const exists = (path: string): Promise<boolean> =>
  access(path, constants.R_OK).then(
    () => true,
    () => false,
  )
