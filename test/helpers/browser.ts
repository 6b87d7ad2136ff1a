// A real Chromium for the browser tests (playwright-core drives Debian's chromium; no browser is
// downloaded). Outside CI a missing Chromium skips those tests, saying how to install it; under
// CI=true it fails the run.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import { IN_CI } from './services.js'

export const CHROMIUM_PATH = '/usr/bin/chromium'

/** Quiet, offline-minded flags: nothing of Chromium's own calls out during a test. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']

/** True when Chromium is installed; otherwise throws under CI=true, or says once why the tests skip. */
export function chromiumOrSkip(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true
  const how = 'apt-get install -y chromium'
  if (IN_CI) throw new Error(`Chromium is not at ${CHROMIUM_PATH}, and CI=true requires it (${how})`)
  console.warn(`[skip] Chromium is not at ${CHROMIUM_PATH}: the browser tests are skipped (${how}).`)
  return false
}

/** A headless Chromium on a fresh profile; close() also removes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'threadline-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(userDataDir, { recursive: true, force: true })
    },
  }
}
