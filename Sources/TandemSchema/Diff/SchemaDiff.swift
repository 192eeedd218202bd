extension Schema {
    /// Every change that turns this schema into `new`, in a stable order: roles, then record
    /// types in `new`'s order (added, or changed field by field and role by role), then the
    /// record types `new` no longer has. Fields compare with the system fields filled in, so
    /// listing `"___etag" STRING` without options is no change. Spec §5.2, "Publishing".
    public func changes(to new: Schema) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        changes += roles.filter { !new.roles.contains($0) }.map { .roleRemoved($0) }
        changes += new.roles.filter { !roles.contains($0) }.map { .roleAdded($0) }
        // Positions hold when the roles that stay keep their places (removed ones were last) and
        // new ones come after them.
        let kept = roles.filter(new.roles.contains)
        if !(roles.starts(with: kept) && new.roles.starts(with: kept)) {
            changes.append(.rolePositionsChanged(from: roles, to: new.roles))
        }
        for type in new.recordTypes {
            if let old = recordType(named: type.name) {
                changes += old.changes(to: type)
            } else {
                changes.append(.recordTypeAdded(type))
            }
        }
        changes += recordTypes.filter { new.recordType(named: $0.name) == nil }.map { .recordTypeRemoved($0) }
        return changes
    }
}

extension RecordType {
    /// Field and grant changes from this record type to `new` (same name).
    func changes(to new: RecordType) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        let oldFields = allFields
        for field in new.allFields {
            guard let old = oldFields.first(where: { $0.name == field.name }) else {
                changes.append(.fieldAdded(recordType: name, field))
                continue
            }
            if old.type != field.type {
                changes.append(.fieldTypeChanged(recordType: name, field: field.name, from: old.type, to: field.type))
            }
            if old.options != field.options {
                changes.append(.fieldOptionsChanged(recordType: name, field: field.name, from: old.options, to: field.options))
            }
        }
        changes += oldFields.filter { new.field(named: $0.name) == nil }.map { .fieldRemoved(recordType: name, $0) }
        let oldRights = rightsByRole, newRights = new.rightsByRole
        for role in Set(oldRights.keys).union(newRights.keys).sorted() where oldRights[role] != newRights[role] {
            changes.append(.rightsChanged(recordType: name, role: role, from: oldRights[role] ?? [], to: newRights[role] ?? []))
        }
        return changes
    }
}
