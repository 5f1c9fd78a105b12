//! The stdio transport's own `tools/call` handling (see [`DirectCall`]): each request goes
//! through the protocol library's request handling with the context its session loop would
//! build, so the answer is the same as the library's.

use std::sync::Arc;

use rmcp::Service;
use rmcp::model::{GetExtensions, GetMeta, JsonRpcRequest, ServerJsonRpcMessage};
use rmcp::service::{Peer, RequestContext, RoleServer};

use super::lines::DirectCall;
use super::server::ToolServer;

impl ToolServer {
    /// Runs `tools/call` requests for the stdio transport, which answers them itself (see
    /// [`DirectCall`]). Each goes through the protocol library's own request handling, with
    /// the context its session loop would build, so the answer is the same.
    pub(crate) fn direct_call(&self, peer: Peer<RoleServer>) -> DirectCall {
        let server = self.clone();
        Arc::new(move |request: JsonRpcRequest<_>, cancel| {
            let server = server.clone();
            let peer = peer.clone();
            Box::pin(async move {
                let JsonRpcRequest {
                    id, mut request, ..
                } = request;
                let mut context = RequestContext::new(id.clone(), peer);
                context.ct = cancel;
                std::mem::swap(&mut context.meta, request.get_meta_mut());
                std::mem::swap(&mut context.extensions, request.extensions_mut());
                match Service::handle_request(&server, request, context).await {
                    Ok(result) => ServerJsonRpcMessage::response(result, id),
                    Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
                }
            })
        })
    }
}
