// The one rule for finding the files the pages load from other packages: the copy in the packaged
// assets folder next to the compiled module (an installed package's dist/assets), else the
// package in node_modules (a clone, running src/). The compiled module (dist/, brought up to date
// by the dist helper) is copied into a temporary folder of its own, as in a package, beside an assets
// folder made here.
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIST } from '../helpers/dist.js'
import type * as PackagedAssets from '../../src/pages/packaged-assets.js'
import { findPackagedAsset, PACKAGED_ASSETS, PACKAGED_ASSETS_FOLDER, packagedAssetPath } from '../../src/pages/packaged-assets.js'

type Module = typeof PackagedAssets

let folder: string
let packaged: Module
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'threadline-assets-'))
  await mkdir(join(folder, 'pages'))
  for (const file of ['packaged-assets.js', 'packaged-assets.js.map']) await copyFile(join(DIST, 'pages', file), join(folder, 'pages', file))
  await writeFile(join(folder, 'package.json'), '{ "type": "module" }')
  packaged = (await import(pathToFileURL(join(folder, 'pages', 'packaged-assets.js')).href)) as Module
})
afterAll(() => rm(folder, { recursive: true, force: true }))

describe('packaged page assets', () => {
  it('finds every listed file in node_modules when run from src/', async () => {
    for (const asset of PACKAGED_ASSETS) {
      const path = await findPackagedAsset(asset)
      expect(path).toContain(join('node_modules', asset.packageName, asset.file))
      expect(existsSync(path)).toBe(true)
    }
  })

  it('prefers the copy in the assets folder beside the compiled module', async () => {
    const [graphiql] = PACKAGED_ASSETS
    const copy = join(folder, PACKAGED_ASSETS_FOLDER, packagedAssetPath(graphiql))
    // Not there yet, and no node_modules above the folder either: the start would stop, saying so.
    await expect(packaged.findPackagedAsset(graphiql)).rejects.toThrow(
      `graphiql/graphiql.min.css: neither in ${join(folder, PACKAGED_ASSETS_FOLDER)} (npm run build copies it there) nor in an installed graphiql`,
    )
    await mkdir(join(copy, '..'), { recursive: true })
    await writeFile(copy, 'the packaged copy')
    expect(await packaged.findPackagedAsset(graphiql)).toBe(copy)
  })
})
