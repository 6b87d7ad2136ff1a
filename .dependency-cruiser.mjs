// dependency-cruiser (`depcruise src test/helpers`, part of `npm run lint`): the rules about the
// import graph as a whole, which ESLint's per-file rules cannot see. A violation of each rule is
// planted, and its report checked, by test/structure/lint-boundaries.test.ts.

/**
 * The layers of src/, from the bottom up: a module imports only from its own layer and the layers
 * below it, so the folders form a DAG (a cycle of folders needs an import upwards somewhere, even
 * where no two modules import each other). A lower layer reaches a higher one only through a seam
 * it defines: a function type or interface it owns, which the composition root fills. An entry is a
 * folder of src/ or a file at its root, and a layer holds one folder at most, but for the features:
 * `FEATURES` stands for every folder the table does not name (src/users, src/posts, …, which
 * src/features.ts lists), and between features ESLint's rules hold (one uses another only through
 * its public module or its feature module). A new shared folder or root file goes where it belongs
 * in this table; until then, importing it is an error.
 */
import { registeredFeatures } from './scripts/features.js'

const FEATURES = Symbol('every folder of src/ not named here: the features')

const LAYERS = [
  {
    name: 'core',
    holds: ['core', 'errors.ts', 'recently-used.ts', 'package-info.ts'],
    comment: 'what every layer shares and no layer owns: callers, ids, validation, AppError',
  },
  { name: 'config', holds: ['config', 'config.ts'], comment: 'loadConfig(env) and its sections' },
  { name: 'collections', holds: ['collections'], comment: 'the collection query language and its pages, with no store' },
  { name: 'db', holds: ['db'], comment: 'the store port: runs the collection queries' },
  { name: 'redis', holds: ['redis'], comment: 'Redis connections' },
  { name: 'events', holds: ['events'], comment: 'the events port and its adapters' },
  { name: 'limits', holds: ['limits'], comment: 'allowances and the fair scheduler: the policy, counted in the process or in Redis' },
  { name: 'idempotency', holds: ['idempotency'], comment: 'the kept answers of writes sent with an Idempotency-Key' },
  { name: 'http', holds: ['http'], comment: 'the HTTP transport: the pipeline of stages, envelope, errors, caching, versioning, the OpenAPI document' },
  { name: 'pages', holds: ['pages'], comment: 'the landing page, the docs page, GraphiQL' },
  { name: 'graphql', holds: ['graphql'], comment: 'the GraphQL endpoint, over HTTP and its subscription transports' },
  { name: 'operations', holds: ['operations'], comment: 'health, metrics, the log destination' },
  { name: 'tracing', holds: ['tracing'], comment: 'traces, through the seams the layers below define' },
  {
    name: 'feature',
    holds: ['feature.ts', 'data-section.ts', 'seed-section.ts', 'fake-data.ts'],
    comment: 'what a feature is: the shape the features implement',
  },
  { name: 'features', holds: [FEATURES], comment: 'the features, each a folder' },
  { name: 'composition', holds: ['features.ts', 'app.ts'], comment: 'the composition root: where features meet the shared layers' },
  { name: 'seed', holds: ['seed'], comment: "the generated data, every feature's seed section in one transaction" },
  { name: 'cli', holds: ['cli'], comment: 'the commands but serve' },
  { name: 'client', holds: ['client'], comment: 'the typed client, a package of its own' },
  { name: 'entries', holds: ['server.ts', 'v8-settings.ts', 'main.ts'], comment: 'the process: serve and the threadline command' },
]

const escape = (text) => text.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&')
const namedFolders = LAYERS.flatMap(({ holds }) => holds.filter((entry) => typeof entry === 'string' && !entry.endsWith('.ts')))
/** The path of an entry of the table, as a regular expression over paths from the project's root. */
const pathOf = (entry) => {
  if (entry === FEATURES) return `^src/(?!(?:${namedFolders.join('|')})/)[^/]+/`
  return entry.endsWith('.ts') ? `^src/${escape(entry)}$` : `^src/${escape(entry)}/`
}

/** One rule per layer: from its modules, nothing in src/ but its own layer and those below. */
const layerRules = LAYERS.map(({ name, holds, comment }, index) => {
  const allowed = LAYERS.slice(0, index + 1).flatMap((layer) => layer.holds.map(pathOf))
  const own = holds.map(pathOf)
  return {
    name: `layer-${name}`,
    comment: `The ${name} layer (${comment}) imports from a higher layer; see LAYERS in .dependency-cruiser.mjs for the order, and move what the lower one needs down, or have it define a seam the composition root fills.`,
    severity: 'error',
    from: { path: own },
    to: { path: '^src/', pathNot: allowed },
  }
})

/**
 * Between features, the order of src/features.ts's FEATURES: a feature imports only features
 * registered before it (posts know users; users know no other), so the features form a DAG too.
 * Where an earlier feature's items embed a later one's (a user's posts), the later one offers the
 * relation (`embeds`) and the composition root wires it.
 */
const REGISTERED = registeredFeatures(import.meta.dirname)
const featureRules = REGISTERED.flatMap((name, index) => {
  const later = REGISTERED.slice(index + 1)
  if (later.length === 0) return []
  return [
    {
      name: `feature-${name}`,
      comment: `The ${name} feature imports a feature registered after it in src/features.ts: a feature uses only those before it. Have the later one offer what the earlier needs (\`embeds\`), or move the feature in FEATURES if it comes first by nature.`,
      severity: 'error',
      from: { path: `^src/${name}/` },
      to: { path: `^src/(?:${later.map(escape).join('|')})/` },
    },
  ]
})

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'An import cycle: none of its modules can be read, tested or loaded without all the others. Split the module that does two jobs, ' +
        'or have the composition root (src/app.ts) hand the one a function of the other.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    ...featureRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a module that names another's types cannot be read or changed
    // without it, whether or not the import survives compilation, so a cycle through a type is as
    // tangled as any other (and one through a type alone would otherwise go unseen).
    tsPreCompilationDeps: true,
    // Imports are resolved as the compiler resolves them (NodeNext: `./x.js` names `./x.ts`).
    tsConfig: { fileName: 'tsconfig.json' },
    // A run reads again only the files whose content changed since the last (in node_modules/.cache).
    cache: { strategy: 'content' },
  },
}
