// The GraphQL explorer's start-up script (served as /graphql/explorer/explorer.js): GraphiQL with a fetcher
// that sends queries and mutations over HTTP and subscriptions over graphql-ws, both with the token given
// in GraphiQL's Headers tab ({"Authorization": "Bearer <access token>"}).
(function () {
  "use strict";
  var httpUrl = location.origin + "/graphql";
  var wsUrl = httpUrl.replace(/^http/, "ws");
  var ws = null;
  var wsAuth = null;

  function wsClient(auth) {
    if (ws === null || wsAuth !== auth) {
      if (ws !== null) ws.dispose();
      wsAuth = auth;
      ws = window.graphqlWs.createClient({ url: wsUrl, lazy: true, connectionParams: auth ? { authorization: auth } : {} });
    }
    return ws;
  }

  function isSubscription(params, opts) {
    var doc = opts && opts.documentAST;
    if (!doc) return /^\s*subscription\b/.test(params.query || "");
    return doc.definitions.some(function (d) {
      return d.kind === "OperationDefinition" && d.operation === "subscription" && (!params.operationName || (d.name && d.name.value === params.operationName));
    });
  }

  function fetcher(params, opts) {
    var headers = Object.assign({}, (opts && opts.headers) || {});
    var auth = headers.Authorization || headers.authorization || null;
    if (isSubscription(params, opts)) return wsClient(auth).iterate(params);
    return fetch(httpUrl, {
      method: "POST",
      headers: Object.assign({ "content-type": "application/json", accept: "application/json" }, headers),
      body: JSON.stringify(params),
    }).then(function (res) {
      return res.json();
    });
  }

  var defaultQuery = [
    "# Weft's GraphQL API. Put your access token in the Headers tab below:",
    '#   {"Authorization": "Bearer <access token>"}',
    "# (log in with the `login` mutation, or copy the token from your client).",
    "# Subscriptions run over graphql-ws at " + wsUrl + ".",
    "",
    "query Me {",
    "  viewer {",
    "    userId",
    "  }",
    "}",
    "",
  ].join("\n");

  ReactDOM.createRoot(document.getElementById("graphiql")).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: defaultQuery,
      defaultHeaders: '{\n  "Authorization": "Bearer <access token>"\n}',
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
    }),
  );
})();
