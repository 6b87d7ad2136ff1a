// The second half of `npm run build`: copies the files the pages load from other packages
// (PACKAGED_ASSETS) to dist/assets, so the packed Threadline serves GraphiQL and the API reference
// without React, GraphiQL or Swagger UI installed. Run after tsc. A copy already there with its
// source's size and time is kept (npm start builds every time), and a file dropped from the list
// is removed, so it does not linger in the package.
import { copyFile, mkdir, readdir, rm, stat, utimes } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { installedAssetPath, PACKAGED_ASSETS, PACKAGED_ASSETS_FOLDER, packagedAssetPath } from '../src/pages/packaged-assets.js'

const folder = join(fileURLToPath(new URL('../dist/', import.meta.url)), PACKAGED_ASSETS_FOLDER)

const listed = new Set(PACKAGED_ASSETS.map(packagedAssetPath))
const present = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => [])
for (const entry of present) {
  const path = join(entry.parentPath, entry.name)
  if (entry.isFile() && !listed.has(relative(folder, path))) await rm(path)
}

for (const asset of PACKAGED_ASSETS) {
  const source = installedAssetPath(asset)
  const target = join(folder, packagedAssetPath(asset))
  const [from, to] = await Promise.all([stat(source), stat(target).catch(() => undefined)])
  if (to !== undefined && to.size === from.size && Math.trunc(to.mtimeMs) === Math.trunc(from.mtimeMs)) continue
  await mkdir(dirname(target), { recursive: true })
  await copyFile(source, target)
  // The copy takes its source's time (to the millisecond, as a Date holds it): the next build compares the two.
  await utimes(target, from.atime, from.mtime)
}
