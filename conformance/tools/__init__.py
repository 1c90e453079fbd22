"""Tools for MQ administrators built on the model: the cluster what-if, the DLQ rules-table tools, the source-document index, the protocol checker."""
