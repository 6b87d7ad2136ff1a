// Compiles src/ to dist/ once before the suite: the CLI tests run the real `threadline` command.
import { execFileSync } from 'node:child_process'

export default function setup(): void {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
}
