"""The gateway: the platform for browsers, over WebSocket, and the browser client it serves.

Same shape as the other services (main: wiring; api: the protocol and its checks;
handlers: one connection's work; views: what a browser is shown) but no store and no
migrations: it is stateless. Every session lives in the tokens the browser holds (its
player token, seat token or spectator token, all signed by the platform) and every fact
comes from the platform's public gRPC APIs, so any number of replicas serve any browser,
and a browser that reconnects anywhere resumes from the last seq it has.

WebSocket rather than gRPC-Web or Connect: browsers speak it natively with no proxy in
front of the gateway, and it is full duplex, which playing (commands and events on one
connection) and watching (a live push per committed command) both need.
"""
