"""Friends and blocking (`relationships`), direct conversations (`conversations`) and their calls
(`calls`): docs/social.md. Sub-packages import leftwards only: calls -> conversations -> relationships
(a lower one offers a hook where a higher one must act)."""
