// Schema lint (issue 14, item 2): graphql-eslint's schema-recommended and schema-relay rules on the exported SDL,
// with zero findings. `.ci/run` and tests/designs/test_schema_lint.py run it on schema/schema.graphql and, through stdin
// with TABLEGRAPH_LINT_SCHEMA naming the exported file, on the SDL of the other designs (schema.orders:ORDERS,
// schema.library:LIBRARY).
// Each rule configured away from its preset carries its reason on the line above it.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

const schema = process.env.TABLEGRAPH_LINT_SCHEMA || 'schema/schema.graphql';
const presets = {
  ...graphqlPlugin.configs['flat/schema-recommended'].rules,
  ...graphqlPlugin.configs['flat/schema-relay'].rules,
};
const [namingSeverity, namingOptions] = presets['@graphql-eslint/naming-convention'];
const { EnumValueDefinition: _upperCase, ...namingKept } = namingOptions;

export default [
  {
    files: ['**/*.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema } } },
    plugins: { '@graphql-eslint': graphqlPlugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      ...presets,
      // Enum values of declared enums are the stored strings (ProjectStatus.active), exposed as-is on purpose: no case style for EnumValueDefinition.
      '@graphql-eslint/naming-convention': [namingSeverity, { ...namingKept, EnumValueDefinition: {} }],
      // Natural keys are fields of their own named after the declared attributes (Course.courseId), the same names the root fields take as arguments.
      '@graphql-eslint/no-typename-prefix': 'off',
      // Only entities (Node) have identity; connections, edges, PageInfo, mutation errors, deletion results and subscription events (their node has the id) are values without an id,
      // and so are the maps of a declared shape, stored inside their item (schema/library.py's PostalAddress and LibraryCard, schema/online_shop.py's Address, InvoiceDetail, InvoicePayment and ProductDetail).
      '@graphql-eslint/strict-id-in-types': ['error', { exceptions: { suffixes: ['Connection', 'Edge', 'Error', 'Change'], types: ['PageInfo', 'Deleted', 'DeletedItems', 'PostalAddress', 'LibraryCard', 'Address', 'InvoiceDetail', 'InvoicePayment', 'ProductDetail'] } }],
      // Every connection pages both ways: first/after and last/before.
      '@graphql-eslint/relay-arguments': ['error', { includeBoth: true }],
      // Lists of non-edge types are deliberate: a connection's `nodes` shortcut, node(s)(ids:), batch root fields, DeletedItems.
      '@graphql-eslint/relay-edge-types': ['error', { listTypeCanWrapOnlyEdgeType: false }],
    },
  },
];
