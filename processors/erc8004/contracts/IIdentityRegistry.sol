// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The part of the ERC-8004 Identity Registry the committer reads: agents are
/// ERC-721 tokens (agentId = tokenId, agentURI = tokenURI) with an owner, an
/// approved address and operators, registered with an agentURI that points
/// at the agent's registration file.
interface IIdentityRegistry {
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);

    function ownerOf(uint256 agentId) external view returns (address);
    function getApproved(uint256 agentId) external view returns (address);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
    function tokenURI(uint256 agentId) external view returns (string memory);
}
