"""The Kopf adapter: the handlers (`handlers`), one operator instance (`app`), the process runner (`runner`).

Importing it registers nothing and reads no environment: `binding-scheduler run` builds its own registry
(see `runner`), and `kopf run -m binding_scheduler.operator.kopf_main` is the one import meant to register in
Kopf's default registry (see `kopf_main`)."""
