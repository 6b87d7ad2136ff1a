// dependency-cruiser (`depcruise src test/helpers`, part of `npm run lint`): the rules about the
// import graph as a whole, which ESLint's per-file rules cannot see. A violation of each rule is
// planted, and its report checked, by test/structure/lint-boundaries.test.ts.

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
