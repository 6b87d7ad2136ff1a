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

/** How long Chromium may take to start: seconds on this 2-core machine while the suite runs, far more once. */
const LAUNCH_TIMEOUT_MS = 60_000

/** The timeout of a hook that starts Chromium (and a server beside it). */
export const LAUNCH_HOOK_MS = 90_000

/** A headless Chromium on a fresh profile; close() also removes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'threadline-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    // Within LAUNCH_HOOK_MS: a start that hangs fails with Playwright's account of it (the browser's
    // own log), not the test's hook timeout.
    timeout: LAUNCH_TIMEOUT_MS,
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(userDataDir, { recursive: true, force: true })
    },
  }
}
