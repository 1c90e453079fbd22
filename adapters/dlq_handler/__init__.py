"""DLQ handlers the kit can run against any adapter with the ``dlq`` capability.

* :mod:`.handler`: the kit's own handler, an MQ client program driven by a rules table.
* :mod:`.host`: runs handler instances for an adapter and reports each message's fate.
* :mod:`.external`: the protocol that lets any program (a site's own handler) be checked instead.
"""
