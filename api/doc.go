// Package api holds the types that cross warmroute's process boundaries: the
// configuration file schema, the HTTP headers and Envoy metadata keys the router
// speaks, and the OpenAI-style error body. It depends only on the standard library
// so that every other package, and external tools, can import it cheaply.
package api
