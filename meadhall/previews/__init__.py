"""Link previews (docs/outbound.md): a card for a URL, fetched through the outbound guard and cached in the
database for every node (OpenAPI: getLinkPreview)."""
