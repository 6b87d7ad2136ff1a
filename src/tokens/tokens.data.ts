// The tokens' part in the data files (src/data-section.ts): none. A file never carries a
// token, not even its hash (an export is not a way to sign in elsewhere); the section is here so
// that `import --replace` and `threadline reset` empty the table before its users' and start its
// ids again.
import type { DataSection } from '../data-section.js'

export const tokensData: DataSection = {
  name: 'tokens',
  noun: 'token',
  references: ['users'],
}
