// ESLint: typescript-eslint's type-checked recommendations over everything we write.
import { basename, dirname } from 'node:path'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import { featureFolders, registeredFeatures, sharedLayers } from './scripts/features.js'

// The structure's lists, read from the tree and src/features.ts (scripts/features.js), never by hand.
const FEATURE_FOLDERS = featureFolders(import.meta.dirname)
const REGISTERED = registeredFeatures(import.meta.dirname)
const SHARED = sharedLayers(import.meta.dirname)
const anyOf = (names) => (names.length === 1 ? names[0] : `{${names.join(',')}}`)

/** A feature module (src/<name>/<name>.feature.ts) that src/features.ts does not register serves nothing. */
const structure = {
  rules: {
    'registered-feature': {
      meta: {
        type: 'problem',
        messages: { unregistered: "The feature '{{name}}' is not in src/features.ts: add it to FEATURES (and to createServices), or it is served nowhere." },
      },
      create: (context) => ({
        Program(node) {
          const name = basename(dirname(context.filename))
          if (basename(context.filename) === `${name}.feature.ts` && !REGISTERED.includes(name))
            context.report({ node, messageId: 'unregistered', data: { name } })
        },
      }),
    },
  },
}

/**
 * The structure's boundaries (docs/architecture.md, "The layers"), exported for the test that
 * plants violations (test/structure/feature-boundaries.test.ts). Shared layers know no feature: they
 * are handed what they need (functions, GraphQL parts, topic schemas) by the composition root
 * (src/app.ts, src/features.ts, src/main.ts, src/server.ts), the CLI, the seed and the client,
 * which may import any feature (.dependency-cruiser.mjs orders the folders themselves).
 */
export const boundaries = [
  {
    files: [`src/${anyOf(SHARED)}/**/*.ts`, 'src/errors.ts', 'src/config.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...FEATURE_FOLDERS.map((name) => `**/${name}/*`), '**/features.js', '**/app.js'],
              message: 'A shared layer imports no feature: have the composition root (src/app.ts, src/features.ts) hand it what it needs.',
            },
          ],
        },
      ],
    },
  },
  // A feature uses another only through what that one publishes for others (<feature>.public.ts:
  // its reads and visibility rules) or its feature module; never the composition root. The
  // relations one embeds in another's items are wired in src/features.ts, so no two features need
  // each other.
  {
    files: [`src/${anyOf(FEATURE_FOLDERS)}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...FEATURE_FOLDERS.map((name) => `../${name}/*`), '!../*/*.public.js', '!../*/*.feature.js'],
              message:
                'A feature uses another only through its public module (<feature>.public.ts) or its feature module: ask that feature to publish what you need.',
            },
            { group: ['**/features.js', '**/app.js'], message: 'A feature does not import the composition root.' },
          ],
        },
      ],
    },
  },
  // Every feature module is registered in src/features.ts.
  { files: ['src/*/*.feature.ts'], plugins: { structure }, rules: { 'structure/registered-feature': 'error' } },
]

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'off',
      // Fastify plugins, hooks and handlers are async by contract, with or without an await inside.
      '@typescript-eslint/require-await': 'off',
    },
  },
  ...boundaries,
  {
    // Fastify builds request.routeOptions anew on each read: a request's route config is read once,
    // through routeConfigOf (src/core/route-config-read.ts).
    files: ['src/**/*.ts'],
    ignores: ['src/core/route-config-read.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='routeOptions']",
          message: 'Read the route config with routeConfigOf(request) (src/core/route-config-read.ts): Fastify builds request.routeOptions anew on each read.',
        },
      ],
    },
  },
  {
    // Tests read parsed JSON bodies (`res.json()` is any) and assert on them with expect().
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Generated by openapi-typescript (npm run client:types): its unions say what the document says.
    files: ['src/client/openapi.ts'],
    rules: { '@typescript-eslint/no-redundant-type-constituents': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    // Plain JavaScript runs on Node (bench/peers/*.mjs, this file).
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
  },
)
