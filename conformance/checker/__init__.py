"""The checkers, pure over a history: the sequential checker against the model, blame by counterfactual, the check of concurrent histories, the accounting of messages after crashes."""
