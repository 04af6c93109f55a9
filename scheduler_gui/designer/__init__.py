"""The designer: the forms that edit a schedule document, each showing what its choices do."""
