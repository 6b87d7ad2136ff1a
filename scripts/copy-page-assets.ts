// The second half of `npm run build`: copies the files the pages load from other packages
// (PACKAGED_ASSETS) to dist/assets, so the packed Threadline serves GraphiQL and the API reference
// without React, GraphiQL or Swagger UI installed. Run after tsc.
import { copyFile, mkdir, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { installedAssetPath, PACKAGED_ASSETS, PACKAGED_ASSETS_FOLDER, packagedAssetPath } from '../src/pages/packaged-assets.js'

const folder = join(fileURLToPath(new URL('../dist/', import.meta.url)), PACKAGED_ASSETS_FOLDER)

// Emptied first: a file dropped from the list must not linger in the package.
await rm(folder, { recursive: true, force: true })
for (const asset of PACKAGED_ASSETS) {
  const target = join(folder, packagedAssetPath(asset))
  await mkdir(dirname(target), { recursive: true })
  await copyFile(installedAssetPath(asset), target)
}
