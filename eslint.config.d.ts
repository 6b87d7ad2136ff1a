// The lint configuration's named export, for the structure tests (test/structure/*.test.ts).
import type { Linter } from 'eslint'

export const boundaries: Linter.Config[]
declare const config: Linter.Config[]
export default config
